#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/bench_minimize.sh - the minimization benchmark: bury variant
# reproducers (corpus/regressions/variants/) among N irrelevant ops on two
# extra CPUs (tests/minimize/pad.awk), time `ptfuzz minimize` on each, print
# a markdown table.
#
#   bench/bench_minimize.sh [--ops N] [--reps R] [--out DIR] [--afl-tmin] [--libfuzzer]
#                           [--lf-runs N] [--lf-timeout S] [VARIANT[@CPU]...]
#
# VARIANT@CPU puts the pad ops on that CPU of the reproducer, in its address
# space (pad.awk mix=CPU): no CPU or address space holds only pad ops, so
# delta debugging alone has to find the reproducer's events.  --afl-tmin
# also runs afl-tmin (AFL++) on each padded trace, with the same question
# (bench/minimize_oracle.c, built with afl-clang-fast in build/afl), once.
# --libfuzzer runs libFuzzer's -minimize_crash=1 on each padded trace with
# the same oracle as a libFuzzer target (build/bench-libfuzzer, clang-14,
# no sanitizer), -runs=N per step (default 5000), stopped after S seconds
# (default 300; the file it has reached by then is the result).
# Defaults: 1000 ops, 3 repetitions (the table gives the fastest and the
# slowest), the variants of bench/RESULTS.md "Minimization".  Traces go to
# DIR (default build/bench/minimize, never committed).  Exit: 0 every
# minimization took < 10 s and kept its signature; 1 one lost it; 3 one
# was slower than the target (the numbers are still printed).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/build/bench/minimize
OPS=1000
REPS=3
MAX_SECONDS=10
VARIANTS=()
AFL_TMIN=0
LIBFUZZER=0
LF_RUNS=5000
LF_TIMEOUT=300

while [ $# -gt 0 ]; do
	case $1 in
	--ops) OPS=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--afl-tmin) AFL_TMIN=1; shift ;;
	--libfuzzer) LIBFUZZER=1; shift ;;
	--lf-runs) LF_RUNS=$2; shift 2 ;;
	--lf-timeout) LF_TIMEOUT=$2; shift 2 ;;
	-h | --help) sed -n '3,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench/bench_minimize.sh: unknown option $1" >&2; exit 2 ;;
	*) VARIANTS+=("$1"); shift ;;
	esac
done
[ ${#VARIANTS[@]} -gt 0 ] || VARIANTS=(mremap-pmd-no-rmap-lock mremap-leaf-only-flush mprotect-batch-overrun
	lazy-mmu-irq switch-to-no-dsb pgtable-no-zero-dsb
	mremap-leaf-only-flush@0 mprotect-batch-overrun@1 pgtable-no-zero-dsb@0)

cd "$ROOT"
echo "==> building the release preset (ptfuzz)" >&2
cmake --preset release >/dev/null
cmake --build --preset release --target ptfuzz >&2
PTFUZZ=build/release/tools/ptfuzz
mkdir -p "$OUT"
if [ "$AFL_TMIN" = 1 ]; then
	command -v afl-tmin >/dev/null && command -v afl-clang-fast >/dev/null ||
		{ echo "bench/bench_minimize.sh: --afl-tmin needs afl++ (afl-tmin, afl-clang-fast)" >&2; exit 2; }
	echo "==> building the oracle with afl-clang-fast (build/afl)" >&2
	cmake -S . -B build/afl -G Ninja -DCMAKE_C_COMPILER=afl-clang-fast -DCMAKE_BUILD_TYPE=Release \
		-DPTFUZZ_TESTS=OFF >/dev/null
	AFL_QUIET=1 cmake --build build/afl --target ptfuzz-minimize-oracle >&2
	ORACLE=build/afl/bench/ptfuzz-minimize-oracle
fi
if [ "$LIBFUZZER" = 1 ]; then
	command -v clang-14 >/dev/null || { echo "bench/bench_minimize.sh: --libfuzzer needs clang-14" >&2; exit 2; }
	echo "==> building the oracle as a libFuzzer target (build/bench-libfuzzer)" >&2
	cmake -S . -B build/bench-libfuzzer -G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_BUILD_TYPE=Release \
		-DPTFUZZ_FUZZERS=ON -DPTFUZZ_TESTS=OFF >/dev/null
	cmake --build build/bench-libfuzzer --target ptfuzz-minimize-oracle-fuzz >&2
	LF_ORACLE=build/bench-libfuzzer/bench/ptfuzz-minimize-oracle-fuzz
fi
AFL_ROWS=()
LF_ROWS=()

# events FILE: FILE's event lines (not the header, not comments)
events() {
	grep -cv -e '^@ptt' -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$1"
}

# trace_bytes FILE: FILE's size without its comment lines
trace_bytes() {
	grep -v '^[[:space:]]*#' "$1" | wc -c
}

# signatures_of V FILE: the signatures FILE replays to under V, one a line
signatures_of() {
	{ "$PTFUZZ" replay --json --variant "$1" "$2" || true; } | grep -o '"signature": *"[^"]*"' |
		sed 's/.*: *"//; s/"$//'
}

signature() {
	signatures_of "$1" "$2" | head -n 1
}

echo "| reproducer (variant) | pad ops on | events in | events out | reproducer's events | replays | time min / max (s) | same signature |"
echo "|---|---|---:|---:|---:|---:|---:|---|"
status=0
for arg in "${VARIANTS[@]}"; do
	v=${arg%@*}
	mix=
	where="2 extra CPUs, asid 7, 8"
	if [ "$v" != "$arg" ]; then
		mix=${arg#*@}
		where="its cpu$mix, asid 1"
	fi
	repro=corpus/regressions/variants/$v.ptt
	padded=$OUT/$v-$OPS${mix:+-mix$mix}.ptt
	min=${padded%.ptt}.min.ptt
	awk -v n="$OPS" -v seed=1 -v mix="$mix" -f tests/minimize/pad.awk "$repro" >"$padded"
	sig=$(signature "$v" "$repro")
	times=()
	for _ in $(seq "$REPS"); do
		t0=$(date +%s.%N)
		"$PTFUZZ" minimize -f -q --variant "$v" --signature "$sig" "$padded" -o "$min"
		t1=$(date +%s.%N)
		times+=("$(echo "$t1 - $t0" | bc -l)")
	done
	read -r tmin tmax < <(printf '%s\n' "${times[@]}" | sort -n | sed -n '1p;$p' | xargs)
	head=$(sed -n 2p "$min")	# "# minimized by ... (N events -> M events, K replays, T s)"
	in=$(echo "$head" | sed 's/.*(\([0-9]*\) events\{0,1\} -> .*/\1/')
	outn=$(echo "$head" | sed 's/.* -> \([0-9]*\) events\{0,1\}, .*/\1/')
	replays=$(echo "$head" | sed 's/.* events\{0,1\}, \([0-9]*\) replays\{0,1\}, .*/\1/')
	orig=$(events "$repro")
	same=yes
	[ "$(signature "$v" "$min")" = "$sig" ] || { same=NO; status=1; }
	printf '| `%s` | %s | %s | %s | %s | %s | %.2f / %.2f | %s |\n' "$v" "$where" "$in" "$outn" "$orig" "$replays" \
		"$tmin" "$tmax" "$same"
	if [ "$(echo "$tmax >= $MAX_SECONDS" | bc -l)" = 1 ] && [ "$status" = 0 ]; then
		status=3
	fi
	if [ "$AFL_TMIN" = 1 ]; then
		tmin_out=${padded%.ptt}.afl-tmin.ptt
		t0=$(date +%s.%N)
		afl-tmin -i "$padded" -o "$tmin_out" -- "$ORACLE" --variant "$v" "$sig" @@ >"$tmin_out.log" 2>&1 ||
			echo "afl-tmin failed on $padded: see $tmin_out.log" >&2
		t1=$(date +%s.%N)
		execs=$(sed 's/\x1b\[[0-9;]*m//g' "$tmin_out.log" | grep -o 'Number of execs done : *[0-9]*' | grep -o '[0-9]*$')
		asame=no
		[ -s "$tmin_out" ] && signatures_of "$v" "$tmin_out" | grep -qxF "$sig" && asame=yes
		AFL_ROWS+=("$(printf '| `%s` | %s | %s / %s | %s / %s | %s / %s | %.1f / %.2f | %s / %s |' "$v" "$where" \
			"$([ -s "$tmin_out" ] && events "$tmin_out" || echo -)" "$outn" \
			"$([ -s "$tmin_out" ] && trace_bytes "$tmin_out" || echo -)" "$(trace_bytes "$min")" \
			"${execs:--}" "$replays" "$(echo "$t1 - $t0" | bc -l)" "$tmin" "$asame" "$same")")
	fi
	if [ "$LIBFUZZER" = 1 ]; then
		lf_out=${padded%.ptt}.libfuzzer.ptt
		rm -f "$lf_out"
		t0=$(date +%s.%N)
		lst=0
		PTFUZZ_ORACLE_SIGNATURE=$sig PTFUZZ_ORACLE_VARIANT=$v timeout "$LF_TIMEOUT" "$LF_ORACLE" \
			-minimize_crash=1 -runs="$LF_RUNS" -seed=1 -exact_artifact_path="$lf_out" "$padded" \
			>"$lf_out.log" 2>&1 || lst=$?
		t1=$(date +%s.%N)
		steps=$(grep -c '^CRASH_MIN: minimizing crash input' "$lf_out.log" || true)
		ended=done
		[ "$lst" = 124 ] && ended="stopped at ${LF_TIMEOUT} s"
		lsame=no
		[ -s "$lf_out" ] && signatures_of "$v" "$lf_out" | grep -qxF "$sig" && lsame=yes
		LF_ROWS+=("$(printf '| `%s` | %s | %s / %s | %s / %s | %s | %.1f / %.2f (%s) | %s / %s |' "$v" "$where" \
			"$([ -s "$lf_out" ] && events "$lf_out" || echo -)" "$outn" \
			"$([ -s "$lf_out" ] && trace_bytes "$lf_out" || echo -)" "$(trace_bytes "$min")" \
			"$steps" "$(echo "$t1 - $t0" | bc -l)" "$tmin" "$ended" "$lsame" "$same")")
	fi
done
if [ ${#LF_ROWS[@]} -gt 0 ]; then
	echo
	echo "| reproducer (variant) | pad ops on | events: libFuzzer / ours | bytes (comments left out): libFuzzer / ours | libFuzzer steps | time (s): libFuzzer / ours | same signature: libFuzzer / ours |"
	echo "|---|---|---:|---:|---:|---:|---|"
	printf '%s\n' "${LF_ROWS[@]}"
fi
if [ ${#AFL_ROWS[@]} -gt 0 ]; then
	echo
	echo "| reproducer (variant) | pad ops on | events: afl-tmin / ours | bytes (comments left out): afl-tmin / ours | execs: afl-tmin / ours | time (s): afl-tmin / ours | same signature: afl-tmin / ours |"
	echo "|---|---|---:|---:|---:|---:|---|"
	printf '%s\n' "${AFL_ROWS[@]}"
fi
echo
echo "pad ops per trace: $OPS (+ the reproducer's events); $REPS runs each;" \
	"load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
exit "$status"
