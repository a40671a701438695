#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# fuzz_reach.sh REGRESS DIR - the biased-grammar windows of the variants the seeds do not
# reach: each DIR/VARIANT.bin is a short program of 8-byte biased records (no literal
# ones: what the fuzzer's mutators make), a finding of VARIANT with invariant I6 under
# PTFUZZ_VARIANT=VARIANT, and clean under the default model.
set -u
regress=$1 dir=$2
fail=0 n=0
for f in "$dir"/*.bin; do
	v=${f##*/}
	v=${v%.bin}
	inv=$(PTFUZZ_VARIANT="$v" "$regress" "$f" 2>&1 | grep -o 'ptfuzz finding: I[0-9]*' | head -n 1 | awk '{print $3}')
	if [ "$inv" != I6 ]; then
		echo "FAIL $v: expected an I6 finding, got '${inv:-none}'"
		fail=1
		continue
	fi
	if ! "$regress" "$f" >/dev/null 2>&1; then
		echo "FAIL $v: the default model reports on it"
		fail=1
		continue
	fi
	echo "ok   $v: I6, default clean"
	n=$((n + 1))
done
[ $n -ge 2 ] || { echo "FAIL: only $n inputs"; fail=1; }
exit $fail
