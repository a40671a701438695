#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/run.sh - the replay benchmark: build the release preset, generate
# clean arch-level traces of 10 M and 20 M events, measure decode-only and
# full-replay throughput and peak RSS of each, print a markdown table.
#
#   bench/run.sh [--reps N] [--seed S] [--out DIR] [EVENTS...]
#
# Traces go to DIR (default build/bench, never committed) and are reused
# while the generator is unchanged.  Exit: 0 all targets met; 1 a replay
# reported violations or peak RSS grew with the trace length; 3 a
# throughput target was missed (the numbers are still printed).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/build/bench
REPS=3
SEED=1
SIZES=()
# Targets (bench/RESULTS.md)
MIN_REPLAY_EPS=5000000
MIN_RATIO=0.50
RSS_SLACK_KIB=1024	# peak RSS of the longer trace may exceed the shorter one's by this much

while [ $# -gt 0 ]; do
	case $1 in
	--reps) REPS=$2; shift 2 ;;
	--seed) SEED=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	-h | --help) sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench/run.sh: unknown option $1" >&2; exit 2 ;;
	*) SIZES+=("$1"); shift ;;
	esac
done
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10000000 20000000)

cd "$ROOT"
echo "==> building the release preset (bench targets)" >&2
cmake --preset release >/dev/null
cmake --build --preset release --target ptfuzz-gen-arch ptfuzz-bench-replay >&2
GEN=build/release/bench/ptfuzz-gen-arch
BENCH=build/release/bench/ptfuzz-bench-replay
mkdir -p "$OUT"

RESULTS=()
MISSED=()
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for n in "${SIZES[@]}"; do
	trace=$OUT/arch-n$n-s$SEED.ptt.zst
	if [ ! -s "$trace" ] || [ "$GEN" -nt "$trace" ]; then
		echo "==> generating $trace" >&2
		"$GEN" -n "$n" --seed "$SEED" -o "$trace"
	fi
	echo "==> $BENCH --reps $REPS $trace" >&2
	st=0
	out=$("$BENCH" --reps "$REPS" "$trace") || st=$?
	printf '%s\n' "$out" >&2
	line=$(printf '%s\n' "$out" | grep '^RESULT ' || true)
	if [ -z "$line" ]; then
		echo "bench/run.sh: $BENCH failed on $trace (exit $st)" >&2
		exit 1
	fi
	RESULTS+=("$line")
done

# key=value fields of a RESULT line
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($cpu), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')," \
	"best of $REPS runs, seed $SEED; load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| trace events | file size | decode (M events/s) | replay (M events/s) | replay / decode | by CPU time: decode / replay | violations | decode peak RSS | replay peak RSS |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
status=0
first_rss=
for line in "${RESULTS[@]}"; do
	ev=$(field "$line" events) bytes=$(field "$line" bytes)
	dec=$(field "$line" decode_eps) rep=$(field "$line" replay_eps) ratio=$(field "$line" ratio)
	dcpu=$(field "$line" decode_cpu_eps) rcpu=$(field "$line" replay_cpu_eps)
	viol=$(field "$line" violations) drss=$(field "$line" decode_rss_kib) rrss=$(field "$line" replay_rss_kib)
	awk -v ev="$ev" -v b="$bytes" -v d="$dec" -v r="$rep" -v q="$ratio" -v dc="$dcpu" -v rc="$rcpu" \
		-v v="$viol" -v dr="$drss" -v rr="$rrss" \
		'BEGIN { printf "| %.0f M | %.1f MB | %.2f | %.2f | %.0f %% | %.2f / %.2f | %d | %.1f MiB | %.1f MiB |\n",
			 ev / 1e6, b / 1e6, d / 1e6, r / 1e6, q * 100, dc / 1e6, rc / 1e6, v, dr / 1024, rr / 1024 }'
	[ "$viol" = 0 ] || status=1
	if awk -v r="$rep" -v m="$MIN_REPLAY_EPS" 'BEGIN { exit !(r < m) }'; then
		MISSED+=("replay $(awk -v r="$rep" 'BEGIN { printf "%.2f", r / 1e6 }') M events/s < 5 M on $ev events")
	fi
	if awk -v q="$ratio" -v m="$MIN_RATIO" 'BEGIN { exit !(q < m) }'; then
		MISSED+=("replay/decode $(awk -v q="$ratio" 'BEGIN { printf "%.0f", q * 100 }') % < 50 % on $ev events")
	fi
	if [ -z "$first_rss" ]; then
		first_rss=$rrss
	elif [ "$rrss" -gt $((first_rss + RSS_SLACK_KIB)) ]; then
		echo "FAIL: replay peak RSS grows with trace length: $first_rss KiB -> $rrss KiB" >&2
		status=1
	fi
done
echo
if [ ${#MISSED[@]} -gt 0 ]; then
	printf 'MISSED: %s\n' "${MISSED[@]}"
	[ $status -ne 0 ] || status=3
elif [ $status -eq 0 ]; then
	echo "All targets met: replay >= 5 M events/s, >= 50 % of decode, peak RSS independent of length, 0 violations."
fi
exit $status
