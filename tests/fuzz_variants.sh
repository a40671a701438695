#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# fuzz_variants.sh REGRESS PTFUZZ ROOT - each variant reproducer converted to a fuzz
# input (corpus/fuzz/ops_invariants/regressions-variants-NAME.bin) must (1) be what
# `ptfuzz convert` makes of the reproducer today, and (2) abort the ops_invariants
# harness under PTFUZZ_VARIANT=NAME with a finding whose invariant is one of those the
# reproducer expects; under the default model it must not (ctest runs the seeds).
set -u
regress=$1 ptfuzz=$2 root=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
for seed in "$root"/corpus/fuzz/ops_invariants/regressions-variants-*.bin; do
	name=${seed##*/regressions-variants-}
	name=${name%.bin}
	src=$root/corpus/regressions/variants/$name.ptt
	"$ptfuzz" convert "$src" "$tmp/$name.bin" 2>/dev/null
	if ! cmp -s "$tmp/$name.bin" "$seed"; then
		v=$name
		echo "FAIL $v: the seed is not what ptfuzz convert makes of $src (run fuzzers/make_seeds.sh)"
		fail=1
		continue
	fi
	expect=$(grep -m1 '^# expect:' "$src" | sed 's/^# expect://')
	# the variant the reproducer is for (its file may carry a suffix: NAME-beside-...)
	v=$(grep -m1 '^# variant:' "$src" | sed 's/^# variant: *//')
	env=
	grep -q '^# expect-default:' "$src" && env=PTFUZZ_CONTRACTS=allow
	out=$(env $env PTFUZZ_VARIANT="$v" "$regress" "$seed" 2>&1)
	inv=$(printf '%s\n' "$out" | grep -o 'ptfuzz finding: I[0-9]*' | head -n 1 | awk '{print $3}')
	case " $expect " in
	*" $inv "*) [ -n "$inv" ] && { echo "ok   $v: $inv"; n=$((n + 1)); continue; } ;;
	esac
	echo "FAIL $v: expected a finding in {$expect}, got '${inv:-none}'"
	fail=1
done
[ $n -ge 16 ] || { echo "FAIL: only $n variants found from their seeds"; fail=1; }
exit $fail
