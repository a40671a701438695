#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# equiv.sh - everything a model speed-up must leave bit-identical, written to a directory
# so that two builds can be diffed:
#
#   bench/equiv.sh BUILD_DIR OUT_DIR [RANDOM]      (from the source tree's root)
#   diff -r OUT_A OUT_B && echo equivalent
#
# OUT_DIR/replay.<variant>.json   `ptfuzz replay --json` of every trace under corpus/ and
#                                 traces/ (reports, state hashes), under every variant
# OUT_DIR/regress.txt             ops_invariants_regress over corpus/fuzz/ops_invariants
#                                 (the seeds; it checks determinism too) and its exit status
# OUT_DIR/verdicts.txt            ptfuzz-verdicts: the seeds and RANDOM (default 20000) random
#                                 fuzz inputs through the harness's decoder and a reset session,
#                                 every violation in full, state and counter hashes; the seeds and
#                                 one in ten random inputs also under every variant
# OUT_DIR/SUMS                    one checksum per file
set -eu
build=${1:?usage: bench/equiv.sh BUILD_DIR OUT_DIR [RANDOM]}
out=${2:?usage: bench/equiv.sh BUILD_DIR OUT_DIR [RANDOM]}
random=${3:-20000}
ptfuzz=$build/tools/ptfuzz
mkdir -p "$out"
traces=$(find corpus traces -type f \( -name '*.ptt' -o -name '*.ptt.zst' -o -path 'corpus/fuzz/trace_replay/*' \) \
	! -name README | LC_ALL=C sort)
variants=$("$ptfuzz" variants --json | sed -n 's/.*"name": *"\([^"]*\)".*/\1/p')
for v in $variants; do
	# exit 1 (violations) and 2 (a bad trace among them) are part of the result
	rc=0
	# shellcheck disable=SC2086
	"$ptfuzz" replay --json --variant "$v" $traces >"$out/replay.$v.json" 2>&1 || rc=$?
	echo "exit $rc" >>"$out/replay.$v.json"
done
rc=0
"$build/fuzzers/ops_invariants_regress" corpus/fuzz/ops_invariants >"$out/regress.raw" 2>&1 || rc=$?
# the driver names itself: the build directory is not part of the result
sed "s|$build/|BUILD/|g" "$out/regress.raw" >"$out/regress.txt" && rm -f "$out/regress.raw"
echo "exit $rc" >>"$out/regress.txt"
seeds=$(find corpus/fuzz/ops_invariants -type f | LC_ALL=C sort)
# shellcheck disable=SC2086
"$build/bench/ptfuzz-verdicts" --variants --random "$random" $seeds >"$out/verdicts.txt"
(cd "$out" && cksum replay.*.json regress.txt verdicts.txt >SUMS)
echo "equiv: $(echo "$traces" | wc -l) traces x $(echo "$variants" | wc -w) variants," \
     "$(echo "$seeds" | wc -l) seeds, $random random inputs -> $out"
