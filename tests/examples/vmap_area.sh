#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# vmap_area.sh PTFUZZ EXAMPLES WORK - the shipped vmalloc recording names the
# lazily freed vmap areas (ctest -R examples.vmap_area):
#   - the plugin emitted `vmap_area lazy` (free_vmap_area_noflush()) and
#     `vmap_area purge` (purge_vmap_node()) events, and every area it put on
#     the purge list inside an operation was purged later in the trace;
#   - with them the trace replays with 0 violations;
#   - the same trace without them reports exactly the I2 of a lazy vfree()
#     (finit_module()'s copy of the module file, traces/examples/FINDINGS.md):
#     the events are what makes it clean, and a recording whose plugin stopped
#     emitting them fails here;
#   - with the purge of that area moved before the TLBI that precedes it (the
#     flush __purge_vmap_area_lazy() makes before purge_vmap_node()), it is
#     I2 purged-with-stale-tlb: the plugin's purge must come after the flush.
PTFUZZ=$1 EXAMPLES=$2 WORK=$3
CASE=vmap_area
HERE=$(cd "$(dirname "$0")" && pwd)
TRACE=$EXAMPLES/qemu-7.2.13+deb14-vmalloc.ptt.zst
mkdir -p "$WORK" && cd "$WORK" || exit 1
. "$HERE/../runner.sh"

pf convert -f "$TRACE" vmalloc.ptt
expect_rc 0
lazy=$(grep -c '^cpu[0-9]* vmap_area lazy va=0xffff[0-9a-f]* len=[0-9a-fxKMG]*$' vmalloc.ptt)
purge=$(grep -c '^cpu[0-9]* vmap_area purge va=0xffff[0-9a-f]* len=[0-9a-fxKMG]*$' vmalloc.ptt)
[ "$lazy" -gt 0 ] && [ "$purge" -gt 0 ] || fail "the trace has $lazy vmap_area lazy and $purge purge events"
# an area put on the list inside an operation (between begin and end on its CPU) is purged after it
awk '$2 == "begin" { open[$1] = 1 } $2 == "end" { open[$1] = 0 }
	$2 == "vmap_area" && $3 == "lazy" && open[$1] { want[$4 " " $5] = NR }
	$2 == "vmap_area" && $3 == "purge" && ($4 " " $5) in want && NR > want[$4 " " $5] { delete want[$4 " " $5]; done++ }
	END { for (a in want) { print "not purged: " a; bad = 1 } if (!done) { print "no lazy area inside an operation"; bad = 1 }
	      exit bad }' vmalloc.ptt >purged || fail "$(cat purged)"

pf replay vmalloc.ptt
expect_rc 0
out_has "^vmalloc.ptt: [0-9]* events, 0 violations"

grep -v '^cpu[0-9]* vmap_area ' vmalloc.ptt >stripped.ptt
pf replay stripped.ptt
expect_rc 1
out_has "^stripped.ptt: [0-9]* events, 1 violation (I2 x1)"
out_has "^  signature: I2/stale-tlb/perm/returned-with-stale-tlb/other$"

# the first area put on the list inside an operation: its purge, and the last TLBI of that CPU before it
awk '$2 == "begin" { open[$1] = 1 } $2 == "end" { open[$1] = 0 }
	$2 == "tlbi" { last[$1] = NR }
	$2 == "vmap_area" && $3 == "lazy" && open[$1] && !a { a = $4 " " $5 }
	a && $2 == "vmap_area" && $3 == "purge" && ($4 " " $5) == a { print NR, last[$1]; exit }' vmalloc.ptt >at
read -r pline tline <at && [ -n "$tline" ] || fail "no purge after a TLBI of an area freed inside an operation"
awk -v p="$pline" -v t="$tline" 'NR == FNR { if (FNR == p) moved = $0; next }
	FNR == t { print moved } FNR != p { print }' vmalloc.ptt vmalloc.ptt >early.ptt
pf replay early.ptt
expect_rc 1
out_has "^  signature: I2/stale-tlb/perm/purged-with-stale-tlb/other$"
out_lacks "returned-with-stale-tlb"
echo "ok: $CASE ($lazy lazy, $purge purge events)"
