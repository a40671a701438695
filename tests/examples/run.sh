#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# run.sh PTFUZZ EXAMPLES WORK TRACE - one shipped real-kernel trace of
# traces/examples/ (ctest -L examples):
#   - it replays under the default model with exit 0 and "0 violations"
#     (an instruction-level recording: every sequence the kernel executed must
#     replay clean; a violation is a finding to analyse, not to hide), or,
#     when EXAMPLES/EXPECTED lists it, to exactly the violations listed there
#     (FINDINGS.md explains each);
#   - an instruction-level one (.ptt.zst) records operations (begin/end) and
#     page-table stores past its start snapshot;
#   - it has its provenance: a "## NAME" section in EXAMPLES/README*.md that
#     names the command that recorded it.
PTFUZZ=$1 EXAMPLES=$2 WORK=$3 TRACE=$4
HERE=$(cd "$(dirname "$0")" && pwd)
CASE=$(basename "$TRACE")
mkdir -p "$WORK" && cd "$WORK" || exit 1
. "$HERE/../runner.sh"

want=$(awk -v n="$CASE" '$1 == n { $1 = ""; print; exit }' "$EXAMPLES/EXPECTED" 2>/dev/null)
if [ -z "$want" ]; then
	pf replay --quiet "$TRACE"
	expect_rc 0
	out_has "^$TRACE: [0-9]* events, 0 violations"
else
	set -- $want
	n=$1
	shift
	pf replay "$TRACE"
	expect_rc 1
	out_has "^$TRACE: [0-9]* events, $n violations\{0,1\} "
	sed -n 's/^  signature: //p' out | sort >got
	printf '%s\n' "$@" | sort >expected
	cmp -s got expected || fail "$CASE: signatures $(tr '\n' ' ' <got)- EXPECTED lists $*"
fi
case $TRACE in
*.ptt.zst)
	pf stats --json "$TRACE"
	[ -z "$want" ] && expect_rc 0
	python3 - out <<'PY' || fail "$CASE: no operation or no store past the snapshot"
import json, sys
c = json.load(open(sys.argv[1]))["files"][0]["counters"]
k = c["by_kind"]
assert k["begin"] > 0 and k["begin"] == k["end"], (k["begin"], k["end"])
assert k["pt_write"] > 0 and k["tlbi"] > 0 and k["dsb"] > 0
PY
	;;
esac
sec=$(grep -l -x "## $CASE" "$EXAMPLES"/README*.md | head -n 1)
[ -n "$sec" ] || fail "$CASE: no '## $CASE' section (its provenance) in $EXAMPLES/README*.md"
awk -v h="## $CASE" '$0 == h { on = 1; next } /^## / { on = 0 } on' "$sec" >prov
grep -q 'record-\(qemu\|ftrace\)\.sh\|capture\.sh' prov ||
	fail "$CASE: its section in $(basename "$sec") does not name the command that recorded it"
echo "ok: $CASE"
