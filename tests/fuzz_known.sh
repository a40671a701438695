#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# fuzz_known.sh REGRESS SEED - the known-findings list matches signatures as shell patterns:
# SEED (the refold question made visible at the next block's contpte_convert()) is a finding
# under a list of exact routines that do not name it, and passed over under the shipped list
# (a wildcard routine with `refold`) and under a pattern of the same shape.
set -u
regress=$1 seed=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "fuzz_known.sh: FAIL: $*" >&2; exit 1; }
printf 'I4/bbm/break-not-visible/change_pte_range refold\nI4/bbm/tlb-conflict/change_protection refold\n' >"$tmp/exact"
printf 'I4/bbm/*/* refold\n' >"$tmp/pattern"
st=0
PTFUZZ_KNOWN=$tmp/exact "$regress" "$seed" >"$tmp/exact.log" 2>&1 || st=$?
[ $st -ne 0 ] && grep -q 'ptfuzz finding: I4 I4/bbm/tlb-conflict/contpte_convert' "$tmp/exact.log" ||
	fail "exact routines: the contpte_convert-named refold was not a finding (exit $st)"
PTFUZZ_KNOWN=$tmp/pattern "$regress" "$seed" >"$tmp/pattern.log" 2>&1 || fail "pattern I4/bbm/*/* refold did not pass the refold over"
grep -q 'ptfuzz known finding: I4 I4/bbm/.* refold' "$tmp/pattern.log" && ! grep -q 'ptfuzz finding' "$tmp/pattern.log" || fail "the pattern's match was not printed as known"
"$regress" "$seed" >"$tmp/shipped.log" 2>&1 || fail "the shipped list did not pass the refold over"
echo "fuzz_known.sh: ok"
