#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# window_rate.sh - how often one window step of the structure-aware mutator makes a
# finding: N one-step `window` mutants of INPUT (ptfuzz-bench-mutants), each replayed
# by ops_invariants_regress under every VARIANT:INVARIANT given and under the default
# model (which must show nothing).  Prints "VARIANT: FOUND / N".
#
#   bench/window_rate.sh INPUT N VARIANT:INV...     e.g.  lazy-mmu-irq:I6
#
# Needs build/release (ptfuzz-bench-mutants, ops_invariants_regress).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { sed -n '3,10p' "$0"; exit 2; }
in=$1 n=$2
shift 2
gen=$root/build/release/bench/ptfuzz-bench-mutants
regress=$root/build/release/fuzzers/ops_invariants_regress
for b in "$gen" "$regress"; do [ -x "$b" ] || { echo "window_rate.sh: $b not built" >&2; exit 2; }; done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$gen" "$in" "$n" "$dir" window
for vi in "$@" default:-; do
	v=${vi%%:*} inv=${vi##*:} c=0
	for f in "$dir"/m*; do
		if [ "$v" = default ]; then
			"$regress" "$f" >/dev/null 2>&1 || c=$((c + 1))
		elif PTFUZZ_VARIANT=$v PTFUZZ_EXPECT=$inv "$regress" "$f" 2>&1 | grep -q "ptfuzz finding: $inv "; then
			c=$((c + 1))
		fi
	done
	echo "$v: $c / $n"
done
