#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# make_seeds.sh - (re)build the ops_invariants seed corpus from the traces:
# every ops-level trace of corpus/mm/ (the seeds' own test programs: the 13
# mremap_test.c cases, the seed-001 mprotect loop, test_vmalloc's patterns,
# linear-map creation, the seed-004 races ...) and every bug-variant
# reproducer of corpus/regressions/variants/, each converted with
# `ptfuzz convert TRACE corpus/fuzz/ops_invariants/NAME.bin`.  Traces the fuzz
# grammar cannot hold (arch-level events, more than 4 CPUs) are skipped and
# listed.  Usage: fuzzers/make_seeds.sh [PTFUZZ]   (default build/release/tools/ptfuzz)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
ptfuzz=${1:-$root/build/release/tools/ptfuzz}
out=$root/corpus/fuzz/ops_invariants
[ -x "$ptfuzz" ] || { echo "make_seeds.sh: $ptfuzz not built (cmake --build --preset release)" >&2; exit 2; }
mkdir -p "$out"
made=0 skipped=0
# corpus/mm/contract/ is left out: its pairs break (or keep) a caller contract with arch
# events or schedules, to pin a rule (tests/test_rule_coverage.c), not as inputs to mutate
for f in $(cd "$root" && find corpus/mm corpus/regressions/variants -name '*.ptt' -not -path 'corpus/mm/contract/*' | sort); do
	name=$(echo "$f" | sed -e 's|^corpus/||' -e 's|\.ptt$||' -e 's|/|-|g' -e 's|\.good$||')
	if "$ptfuzz" convert -f "$root/$f" "$out/$name.bin" 2>"$out/.why"; then
		made=$((made + 1))
	else
		skipped=$((skipped + 1))
		echo "skipped $f: $(cat "$out/.why")"
	fi
done
rm -f "$out/.why"
echo "make_seeds.sh: $made seeds in ${out#"$root"/}, $skipped traces skipped"
