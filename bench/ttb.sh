#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# ttb.sh - time to bug, in the manner of Magma: for every bug variant, TRIALS
# independent runs of each engine on the ops_invariants harness under a fixed
# budget; a trial counts as found when its first finding shows one of the
# invariants the variant is known to be caught by (`ptfuzz variants`), checked
# by replaying the crash with ops_invariants_regress.  The default model runs
# under the same budget and must find nothing.
#
#   bench/ttb.sh [--engines libfuzzer,afl] [--trials N] [--budget S]
#                [--start seeds|empty] [--mutator on|off] [--variants a,b,...]
#                [--out DIR] [--libfuzzer BIN]
#
# --start seeds: the shipped seed corpus (corpus/fuzz/ops_invariants/) without
#   the variant reproducers (no seed hands over the answer); empty: one byte.
# --libfuzzer BIN: another libFuzzer build of the harness (to compare builds,
#   e.g. one with trace-cmp in the engine: bench/RESULTS.md "trace-cmp").
# --mutator off: libFuzzer without the custom mutator (-use_custom_mutator... not
#   available in LLVM 14: a build without it, ops_invariants_fuzz_plain) and AFL++
#   without AFL_CUSTOM_MUTATOR_LIBRARY.
#
# Needs: build/fuzz-fast (cmake --preset fuzz-fast && cmake --build --preset fuzz-fast), build/afl
# (the afl preset) and build/release (ptfuzz, the regress driver, the mutator .so).
# Prints one line per trial and a table (found, median and min-max seconds); the
# table is what bench/RESULTS.md records.  Times are on each fuzzer's own clock, not
# the machine's, which other jobs share: libFuzzer's CPU time (user + system of its
# process, from its start to its first crash, seed loading included) and AFL++'s
# `time:` of its first crash (its own run time, which does count waiting for the CPU:
# give AFL++ an idle machine or a budget that allows for it).  The budget itself is
# wall clock (-max_total_time, -V).  Each trial line also shows the wall seconds.
# libFuzzer runs with -timeout=60: at a load average of 25-30 an input of 0.5 CPU s
# takes 6-20 s wall, and a -timeout=10 ended trials on the load, not on a hang.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
engines=libfuzzer,afl trials=5 budget=60 start=seeds mutator=on variants="" out="" lf_bin=""
while [ $# -gt 0 ]; do
	case $1 in
	--engines) engines=$2; shift 2 ;;
	--trials) trials=$2; shift 2 ;;
	--budget) budget=$2; shift 2 ;;
	--start) start=$2; shift 2 ;;
	--mutator) mutator=$2; shift 2 ;;
	--variants) variants=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--libfuzzer) lf_bin=$2; shift 2 ;;
	-h | --help) sed -n '3,33p' "$0"; exit 0 ;;
	*) echo "ttb.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
case $start in seeds | empty) ;; *) echo "ttb.sh: --start is seeds or empty" >&2; exit 2 ;; esac
case $mutator in on | off) ;; *) echo "ttb.sh: --mutator is on or off" >&2; exit 2 ;; esac
ptfuzz=$root/build/release/tools/ptfuzz
regress=$root/build/release/fuzzers/ops_invariants_regress
lf=$root/build/fuzz-fast/fuzzers/ops_invariants_fuzz
[ "$mutator" = off ] && lf=$root/build/fuzz-fast/fuzzers/ops_invariants_fuzz_plain
[ -n "$lf_bin" ] && lf=$lf_bin
afl=$root/build/afl/fuzzers/ops_invariants_afl
so=$root/build/release/fuzzers/libptfuzz_afl_mutator.so
for b in "$ptfuzz" "$regress"; do [ -x "$b" ] || { echo "ttb.sh: $b not built" >&2; exit 2; }; done
case ,$engines, in *,libfuzzer,*) [ -x "$lf" ] || { echo "ttb.sh: $lf not built (fuzz-fast preset)" >&2; exit 2; } ;; esac
case ,$engines, in *,afl,*) [ -x "$afl" ] || { echo "ttb.sh: $afl not built (afl preset)" >&2; exit 2; } ;; esac

out=${out:-$root/build/ttb}
mkdir -p "$out"
seeds=$out/seeds
rm -rf "$seeds"
mkdir -p "$seeds"
if [ "$start" = seeds ]; then
	find "$root/corpus/fuzz/ops_invariants" -name '*.bin' ! -name 'regressions-variants-*' -exec cp {} "$seeds/" \;
else
	printf '\001' >"$seeds/empty"
fi

# name -> the invariants it is caught by (I numbers), from ptfuzz variants --json
mapfile -t rows < <("$ptfuzz" variants --json | python3 -c '
import json, re, sys
for v in json.load(sys.stdin)["variants"]:
    if v["kind"] in ("bug", "default"):
        print(v["name"], ",".join(sorted(set(re.findall(r"I[0-9]+", v["caught_by"])))) or "-")')
if [ -n "$variants" ]; then
	sel=()
	for r in "${rows[@]}"; do case ,$variants, in *,"${r%% *}",*) sel+=("$r") ;; esac; done
	rows=("${sel[@]}")
fi

# The variants that sit behind a WARN need the decoder's contract breaks.
needs_contracts() { grep -q '^# expect-default:' "$root/corpus/regressions/variants/$1.ptt" 2>/dev/null; }

now() { date +%s.%N; }

# one trial: prints "SECONDS INVARIANT" or "- -"
trial_libfuzzer() {
	local v=$1 t=$2 dir=$3 env=("${@:4}")
	mkdir -p "$dir/corpus"
	local t0; t0=$(now)
	local cpu
	cpu=$({ env "${env[@]}" "$lf" -seed=$((t + 1)) -max_total_time="$budget" -timeout=60 -max_len=1024 \
		-artifact_prefix="$dir/" -print_final_stats=0 "$dir/corpus" "$seeds" >"$dir/log" 2>&1 || true
		times; } | tail -n 1 | cpu_seconds)
	local t1; t1=$(now)
	local crash; crash=$(ls "$dir"/crash-* 2>/dev/null | head -n 1 || true)
	report "$crash" "$cpu" "$(echo "$t1 - $t0" | bc)" "$cpu" "${env[@]}"
}

trial_afl() {
	local v=$1 t=$2 dir=$3 env=("${@:4}")
	local extra=()
	[ "$mutator" = on ] && extra=(AFL_CUSTOM_MUTATOR_LIBRARY="$so")
	local t0; t0=$(now)
	env "${env[@]}" "${extra[@]}" AFL_SKIP_CPUFREQ=1 AFL_NO_UI=1 AFL_BENCH_UNTIL_CRASH=1 AFL_NO_AFFINITY=1 \
		AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_SKIP_CRASHES=1 \
		afl-fuzz -i "$seeds" -o "$dir/out" -s $((t + 1)) -V "$budget" -t 10000 -- "$afl" >"$dir/log" 2>&1 || true
	local t1; t1=$(now)
	local crash; crash=$(ls "$dir"/out/default/crashes/id:* 2>/dev/null | head -n 1 || true)
	# AFL++'s own clock: the time: (ms since its start) in the name of its first crash
	local own=-
	[[ $crash =~ ,time:([0-9]+) ]] && own=$(echo "scale=3; ${BASH_REMATCH[1]} / 1000" | bc)
	report "$crash" "$own" "$(echo "$t1 - $t0" | bc)" - "${env[@]}"
}

# bash's `times` line for the children ("0m1.234s 0m0.056s"): their user + system seconds
cpu_seconds() {
	awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%.3f\n", s }'
}

# The invariant the crash shows, replayed by the plain driver under the same configuration.
# Prints "SECONDS INVARIANT wall=WALL cpu=CPU": SECONDS on the fuzzer's own clock (see the
# header), CPU the CPU seconds the whole trial used (libFuzzer; - for AFL++), found or not.
report() {
	local crash=$1 sec=$2 wall=$3 cpu=$4 env=("${@:5}")
	if [ -z "$crash" ] || [ "$sec" = - ]; then
		printf -- '- - wall=%.1f cpu=%s\n' "$wall" "$cpu"
		return
	fi
	local inv
	inv=$(env "${env[@]}" "$regress" "$crash" 2>&1 | grep -o 'ptfuzz finding: I[0-9]*' | head -n 1 | awk '{print $3}')
	printf '%.2f %s wall=%.1f cpu=%s\n' "$sec" "${inv:--}" "$wall" "$cpu"
}

results=$out/results.txt
: >"$results"
IFS=, read -r -a elist <<<"$engines"
for row in "${rows[@]}"; do
	v=${row%% *} expect=${row#* }
	env=(PTFUZZ_VARIANT="$v")
	[ "$v" != default ] && [ "$expect" != - ] && env+=(PTFUZZ_EXPECT="$expect")
	needs_contracts "$v" && env+=(PTFUZZ_CONTRACTS=allow)
	for e in "${elist[@]}"; do
		for t in $(seq 1 "$trials"); do
			dir=$out/run/$v/$e/$t
			rm -rf "$dir"
			mkdir -p "$dir"
			r=$("trial_$e" "$v" "$t" "$dir" "${env[@]}")
			echo "$v $e $t $r expect=$expect" | tee -a "$results"
		done
	done
done

python3 - "$results" "$budget" "$trials" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
budget, trials = float(sys.argv[2]), int(sys.argv[3])
by = {}
for v, e, t, sec, inv, *_, exp in rows:
    exp = exp.split("=", 1)[1].split(",")
    ok = sec != "-" and (v == "default" or inv in exp)
    by.setdefault((v, e), []).append(float(sec) if ok else None)
engines = sorted({e for _, e in by})
f = lambda x: f"{x:.1f}" if x >= 1 else f"{x:.2f}"
print("\n| variant | " + " | ".join(f"{e}: found | {e}: median s | {e}: min-max s" for e in engines) + " |")
print("|---|" + "---|---|---|" * len(engines))
for v in dict.fromkeys(k[0] for k in by):
    cells = []
    for e in engines:
        ts = by.get((v, e), [])
        hit = [x for x in ts if x is not None]
        if v == "default":
            cells += [f"{len(hit)}/{len(ts)} (must be 0)", "-", "-"]
        elif hit:
            med = statistics.median(hit + [float("inf")] * (len(ts) - len(hit)))
            cells += [f"{len(hit)}/{len(ts)}", "> budget" if med == float("inf") else f(med),
                      f"{f(min(hit))}-{f(max(hit))}"]
        else:
            cells += [f"0/{len(ts)}", f"> {budget:.0f}", "-"]
    print(f"| {v} | " + " | ".join(cells) + " |")
EOF
