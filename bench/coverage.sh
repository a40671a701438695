#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# coverage.sh [OUT] - line and function coverage of the model (engine/mm, arm64, model) and engine/check by the
# shipped corpus: which routines of the model no trace takes (issue 11, class 5).
#
# Builds ptfuzz and the ops_invariants regression driver with clang-14 source-based
# coverage (-fprofile-instr-generate -fcoverage-mapping) in build/coverage, then runs
#   - ptfuzz replay over every .ptt of corpus/ (each variant reproducer also under its
#     variant), and traces/examples/;
#   - ops_invariants_regress over corpus/fuzz/ops_invariants/ (the fuzzer's seeds and the
#     fuzzer-found inputs kept there);
# merges the profiles and writes OUT (default build/coverage/coverage.txt): the llvm-cov
# summary per file of the model and engine/check, and the functions of the model that no
# input executed.  Deterministic: the corpus and the model are.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/coverage
out=${1:-$build/coverage.txt}
cc=${CC:-clang-14}
profdata=${LLVM_PROFDATA:-llvm-profdata-14}
cov=${LLVM_COV:-llvm-cov-14}
for t in "$cc" "$profdata" "$cov"; do
	command -v "$t" >/dev/null || { echo "coverage.sh: $t not found" >&2; exit 2; }
done

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER="$cc" \
	-DCMAKE_C_FLAGS="-fprofile-instr-generate -fcoverage-mapping" -DPTFUZZ_BENCH=OFF >/dev/null
cmake --build "$build" -j2 --target ptfuzz ops_invariants_regress >/dev/null
ptfuzz=$build/tools/ptfuzz
regress=$build/fuzzers/ops_invariants_regress
prof=$build/profiles
rm -rf "$prof"
mkdir -p "$prof"

# one raw profile per process (%p), merged below
export LLVM_PROFILE_FILE="$prof/%p-%m.profraw"
n=0
for f in $(cd "$root" && find corpus traces/examples -name '*.ptt' -o -name '*.ptt.zst' | sort); do
	"$ptfuzz" replay -q "$root/$f" >/dev/null 2>&1 || true
	v=$(grep -m1 '^# variant:' "$root/$f" 2>/dev/null | sed 's/^# variant: *//') || true
	[ -n "$v" ] && { "$ptfuzz" replay -q --variant "$v" "$root/$f" >/dev/null 2>&1 || true; }
	n=$((n + 1))
done
PTFUZZ_CONTRACTS=allow "$regress" "$root"/corpus/fuzz/ops_invariants/* >/dev/null 2>&1 || true
"$profdata" merge -sparse "$prof"/*.profraw -o "$build/corpus.profdata"

{
	echo "# coverage of the model (engine/mm, engine/arm64, engine/model) and engine/check by the corpus ($n traces, and corpus/fuzz/ops_invariants)"
	echo "# bench/coverage.sh; $($cov --version | grep -m1 -i 'llvm version' | sed 's/^ *//')"
	echo
	"$cov" report "$ptfuzz" -object "$regress" -instr-profile="$build/corpus.profdata" \
		"$root/engine/mm" "$root/engine/arm64" "$root/engine/model" "$root/engine/check" 2>/dev/null |
		sed -e "s|$root/||" -e 's#^\(mm\|arm64\|model\|check\)/#engine/\1/#'	# llvm-cov drops the common engine/
	echo
	echo "# functions of the model no input executed (file:function)"
	for f in "$root"/engine/mm/*.c "$root"/engine/arm64/*.c "$root"/engine/model/*.c; do
		"$cov" report "$ptfuzz" -object "$regress" -instr-profile="$build/corpus.profdata" -show-functions "$f" 2>/dev/null |
			awk -v file="${f#"$root"/}" '$1 != "Name" && $1 !~ /^-/ && $1 != "TOTAL" && NF >= 4 &&
				$2 ~ /^[0-9]+$/ && $3 == $2 { print file ":" $1 }'
	done
} > "$out"
echo "coverage.sh: $out"
