#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# run.sh PTFUZZ TEST_ENGINE SRC WORK CASE - `ptfuzz minimize` end to end, one
# behaviour per CASE (registered by tests/minimize.cmake).  SRC is the source
# tree (corpus/, tests/minimize/pad.awk); each case works in its own fresh
# directory WORK.
#
# The variant cases bury a reproducer of corpus/regressions/variants/ among
# irrelevant ops (pad.awk), minimize it, and check that the result replays
# under the variant to the reproducer's signature, that removing any one of
# its events loses that signature (1-minimal: it no longer shows under the
# variant, or the default model shows it too), that it is no longer than the
# reproducer, that it replays by itself as a corpus file (test_engine), and
# that a second run writes the same bytes.
#
# Reproduce a failure by hand:  sh tests/minimize/run.sh build/release/tools/ptfuzz \
#     build/release/tests/test_engine . /tmp/mz-work variant_mremap-leaf-only-flush
set -u

PTFUZZ=$1
TEST_ENGINE=$2
SRC=$3
WORK=$4
CASE=$5

VARIANTS=$SRC/corpus/regressions/variants
PAD=$SRC/tests/minimize/pad.awk

here=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
. "$here/runner.sh"

# expect_error RC ARGS...: exit RC, nothing on stdout, one line on stderr
expect_error() {
	want=$1
	shift
	pf "$@"
	expect_rc "$want"
	[ -s out ] && fail "'ptfuzz $last' wrote to stdout"
	[ "$(wc -l <err)" -eq 1 ] || fail "'ptfuzz $last': expected one line on stderr"
}

# signatures [--variant V] FILE: the signatures FILE replays to, one a line
signatures() {
	"$PTFUZZ" replay --json "$@" | grep -o '"signature": *"[^"]*"' | sed 's/.*: *"//; s/"$//'
}

# shows SIG [--variant V] FILE: FILE replays to a violation with signature SIG
shows() {
	sig=$1
	shift
	signatures "$@" | grep -qxF "$sig"
}

# events FILE: FILE's event lines (not the header, not comments)
events() {
	grep -v -e '^@ptt' -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$1"
}

# still_repro SIG FILE [--variant V]: FILE shows SIG (under V and, with V, not under the default
# model: a trace the default model also gets wrong reproduces no variant's bug)
still_repro() {
	sig=$1
	file=$2
	shift 2
	shows "$sig" "$@" "$file" || return 1
	[ $# -eq 0 ] || ! shows "$sig" "$file"
}

# one_minimal SIG FILE [--variant V]: removing any one event of FILE loses SIG
one_minimal() {
	sig=$1
	file=$2
	shift 2
	n=0
	total=$(wc -l <"$file")
	line=1
	while [ "$line" -le "$total" ]; do
		text=$(sed -n "${line}p" "$file")
		case $text in
		@ptt* | \#* | '') ;;
		*)
			sed "${line}d" "$file" >without.ptt
			still_repro "$sig" without.ptt "$@" &&
				fail "$file stays a reproducer of $sig without line $line: $text"
			n=$((n + 1))
			;;
		esac
		line=$((line + 1))
	done
	[ "$n" -gt 0 ] || fail "$file has no events"
}

# the minimized trace, its time left out: what must be the same from run to run
timeless() {
	sed '2s/, [0-9.]* s)$/)/' "$1"
}

# ---- variant reproducers buried among irrelevant ops ----

# variant_case V [CPU]: the pad ops on two extra CPUs, or (CPU) on that CPU of the reproducer and
# in its address space, where no group of events holds only pad ops
variant_case() {
	v=$1
	mix=${2:-}
	repro=$VARIANTS/$v.ptt
	[ -f "$repro" ] || fail "no reproducer $repro"
	sig=$(signatures --variant "$v" "$repro" | head -n 1)
	[ -n "$sig" ] || fail "$repro shows nothing under $v"
	awk -v n=300 -v seed=7 -v mix="$mix" -f "$PAD" "$repro" >padded.ptt
	shows "$sig" --variant "$v" padded.ptt || fail "padded.ptt lost $sig: pad.awk is not irrelevant"
	[ "$(events padded.ptt | wc -l)" -gt 300 ] || fail "padded.ptt is not padded"

	mkdir corpus
	pf minimize --variant "$v" --signature "$sig" padded.ptt -o corpus/min.ptt
	expect_rc 0
	grep -q "corpus/min.ptt: [0-9]* events* -> [0-9]* events* (" out || fail "no summary line"
	[ -s err ] && fail "stderr is not a terminal: no progress expected"
	shows "$sig" --variant "$v" corpus/min.ptt || fail "corpus/min.ptt does not replay to $sig under $v"
	grep -q "^# minimized by ptfuzz minimize from padded.ptt (" corpus/min.ptt || fail "no provenance line"
	grep -qx "# variant: $v" corpus/min.ptt || fail "no '# variant: $v'"
	grep -q "^# expect: I" corpus/min.ptt || fail "no '# expect:'"
	grep -qF "#   signature: $sig" corpus/min.ptt || fail "no report of $sig"
	[ "$(events corpus/min.ptt | wc -l)" -le "$(events "$repro" | wc -l)" ] ||
		fail "corpus/min.ptt is longer than $repro"
	one_minimal "$sig" corpus/min.ptt --variant "$v"
	# it replays by itself, as a file of corpus/regressions/variants/ does
	"$TEST_ENGINE" corpus >engine.out 2>&1 || { cat engine.out >&2; fail "test_engine rejects corpus/min.ptt"; }

	pf minimize --variant "$v" --signature "$sig" padded.ptt -o min2.ptt
	expect_rc 0
	timeless corpus/min.ptt >a.txt
	timeless min2.ptt >b.txt
	cmp -s a.txt b.txt || fail "a second run wrote different bytes: $(diff a.txt b.txt | head -n 5)"
}

# ---- the command ----

case_arch_trace() {
	# an arch-level trace, no variant: the first violation is the target
	in=$SRC/corpus/regressions/arch/I1-page-freed-stale-tlb.bad.ptt
	sig=$(signatures "$in" | head -n 1)
	pf minimize "$in" -o min.ptt
	expect_rc 0
	shows "$sig" min.ptt || fail "min.ptt does not replay to $sig"
	grep -q '^# variant:' min.ptt && fail "a variant line without --variant"
	[ "$(events min.ptt | wc -l)" -lt "$(events "$in" | wc -l)" ] || fail "nothing removed"
	one_minimal "$sig" min.ptt
}

case_binary_stdin() {
	v=mremap-leaf-only-flush
	awk -v n=200 -v seed=3 -f "$PAD" "$VARIANTS/$v.ptt" >padded.ptt
	"$PTFUZZ" convert padded.ptt padded.ptt.zst || fail "convert"
	sig=$(signatures --variant "$v" "$VARIANTS/$v.ptt" | head -n 1)
	pf minimize --variant "$v" --signature "$sig" padded.ptt -o text.ptt
	expect_rc 0
	"$PTFUZZ" minimize -q --variant "$v" --signature "$sig" - -o bin.ptt <padded.ptt.zst >out 2>err ||
		fail "minimize of a binary trace on stdin"
	grep -q "from <stdin>" bin.ptt || fail "stdin is not named <stdin>"
	events text.ptt >a.txt
	events bin.ptt >b.txt
	cmp -s a.txt b.txt || fail "text and binary input minimize differently"
	pf minimize -q --variant "$v" --signature "$sig" padded.ptt -o -
	expect_rc 0
	grep -q '^@ptt' out || fail "-o - writes no trace to stdout"
}

case_fuzz_input() {
	# a crash file of the ops_invariants harness: the program it decodes to is minimized
	v=mremap-leaf-only-flush
	awk -v n=40 -v seed=3 -f "$PAD" "$VARIANTS/$v.ptt" >padded.ptt
	"$PTFUZZ" convert padded.ptt crash-padded.bin 2>/dev/null || fail "convert to a fuzz input"
	sig=$(signatures --variant "$v" "$VARIANTS/$v.ptt" | head -n 1)
	shows "$sig" --variant "$v" crash-padded.bin || fail "crash-padded.bin lost $sig"
	pf minimize --variant "$v" crash-padded.bin -o min.ptt
	expect_rc 0
	shows "$sig" --variant "$v" min.ptt || fail "min.ptt does not replay to $sig"
	one_minimal "$sig" min.ptt --variant "$v"
	cp crash-padded.bin finding
	expect_error 2 minimize --variant "$v" finding -o x.ptt
	pf minimize -q --input --variant "$v" finding -o min2.ptt
	expect_rc 0
	events min.ptt >a.txt
	events min2.ptt >b.txt
	cmp -s a.txt b.txt || fail "--input minimizes a fuzz input differently"
}

case_same_invariant() {
	v=mremap-pmd-no-rmap-lock
	awk -v n=200 -v seed=5 -f "$PAD" "$VARIANTS/$v.ptt" >padded.ptt
	sig=$(signatures --variant "$v" "$VARIANTS/$v.ptt" | head -n 1)
	pf minimize --variant "$v" --signature "$sig" padded.ptt -o same-sig.ptt
	expect_rc 0
	pf minimize --variant "$v" --same-invariant padded.ptt -o same-inv.ptt
	expect_rc 0
	id=$(signatures --variant "$v" padded.ptt | head -n 1 | cut -d/ -f1)
	grep -qx "# target: $id (--same-invariant)" same-inv.ptt || fail "no '# target: $id (--same-invariant)'"
	signatures --variant "$v" same-inv.ptt | grep -q "^$id/" || fail "same-inv.ptt lost $id"
	[ "$(events same-inv.ptt | wc -l)" -le "$(events same-sig.ptt | wc -l)" ] ||
		fail "keeping only the invariant gave a longer trace"
}

case_replay_cap() {
	v=mremap-pmd-no-rmap-lock
	awk -v n=200 -v seed=5 -f "$PAD" "$VARIANTS/$v.ptt" >padded.ptt
	sig=$(signatures --variant "$v" "$VARIANTS/$v.ptt" | head -n 1)
	pf minimize --variant "$v" --signature "$sig" --max-replays 5 padded.ptt -o min.ptt
	expect_rc 0
	err_has "stopped at the replay cap (5 replays"
	grep -q "^# not 1-minimal: stopped at the replay cap" min.ptt || fail "OUT does not say it is not 1-minimal"
	shows "$sig" --variant "$v" min.ptt || fail "the capped result lost $sig"
}

case_usage_errors() {
	v=mremap-leaf-only-flush
	cp "$VARIANTS/$v.ptt" in.ptt
	expect_error 2 minimize
	err_has '^ptfuzz minimize: no trace file given'
	expect_error 2 minimize in.ptt
	err_has 'no output given'
	expect_error 2 minimize in.ptt in.ptt -o x.ptt
	expect_error 2 minimize --bogus in.ptt -o x.ptt
	expect_error 2 minimize --variant no-such-variant in.ptt -o x.ptt
	expect_error 2 minimize --variant "$v" --variant "$v" in.ptt -o x.ptt
	expect_error 2 minimize --signature I3/x --same-invariant in.ptt -o x.ptt
	expect_error 2 minimize --max-replays 0 in.ptt -o x.ptt
	expect_error 2 minimize --max-replays many in.ptt -o x.ptt
	expect_error 2 minimize in.ptt -o
	expect_error 2 minimize --variant "$v" in.ptt -o no/such/dir/x.ptt
	err_has 'cannot write beside no/such/dir/x.ptt'
	[ -e x.ptt ] && fail "a usage error created OUT"

	# the default model shows nothing in a variant's reproducer
	expect_error 2 minimize in.ptt -o x.ptt
	err_has '^in.ptt: no violation to minimize'
	[ -e x.ptt ] && fail "no violation, yet OUT was created"
	expect_error 2 minimize --variant "$v" --signature I1/no/such in.ptt -o x.ptt
	err_has 'no violation with signature I1/no/such'
	expect_error 2 minimize missing.ptt -o x.ptt
	err_has 'missing.ptt'
	printf '@ptt version=1 cpus=2\ncpu0 bogus_event\n' >bad.ptt
	expect_error 2 minimize bad.ptt -o x.ptt
	err_has 'bad.ptt:2'

	# an existing OUT is kept without -f, replaced with it
	echo keep >x.ptt
	expect_error 2 minimize --variant "$v" in.ptt -o x.ptt
	err_has 'x.ptt exists (-f replaces it)'
	[ "$(cat x.ptt)" = keep ] || fail "OUT was clobbered without -f"
	pf minimize -f -q --variant "$v" in.ptt -o x.ptt
	expect_rc 0
	[ -s out ] && fail "-q printed a summary"
	grep -q '^@ptt' x.ptt || fail "-f did not replace OUT"
	ls | grep -q 'x\.ptt\.' && fail "a temporary file was left beside OUT"

	pf minimize --help
	expect_rc 0
	grep -q '^usage: ptfuzz minimize' out || fail "no usage line in --help"
	grep -q 'exit status' out || fail "no exit status in --help"
	pf --help
	grep -q 'minimize IN -o OUT' out || fail "ptfuzz --help does not list minimize"
}

case "$CASE" in
variant_*@*) v=${CASE#variant_}; variant_case "${v%@*}" "${v#*@}" ;;
variant_*) variant_case "${CASE#variant_}" ;;
*) "case_$CASE" ;;
esac
echo "ok [$CASE]"
