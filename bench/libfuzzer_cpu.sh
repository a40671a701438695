#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# libfuzzer_cpu.sh - what the libFuzzer harness costs per input, by CPU time,
# for several builds of it side by side (the machine is shared: CPU seconds,
# and the builds alternate, ROUNDS rounds).
#
#   bench/libfuzzer_cpu.sh [--rounds N] [--runs N] --fixed DIR --seeds DIR NAME=BIN...
#
# For each build, two measures:
#   seed pass  BIN -runs=0 over DIR of --fixed: the same inputs for every build
#              (libFuzzer runs each once, collecting features);
#   fuzzing    BIN -seed=7 -runs=N (default 4000) from a fresh copy of --seeds.
# Prints a Markdown row per build and round: CPU seconds (user + system) and
# libFuzzer's last status line's coverage.  The --fixed directory is read, never
# written (libFuzzer -runs=0 over a directory adds nothing to it); the copies of
# --seeds are temporary.
set -euo pipefail
rounds=2 runs=4000 fixed="" seeds=""
builds=()
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--fixed) fixed=$2; shift 2 ;;
	--seeds) seeds=$2; shift 2 ;;
	-h | --help) sed -n '3,17p' "$0"; exit 0 ;;
	-*) echo "libfuzzer_cpu.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*=*) builds+=("$1"); shift ;;
	*) echo "libfuzzer_cpu.sh: '$1' is not NAME=BIN" >&2; exit 2 ;;
	esac
done
[ -d "$fixed" ] || { echo "libfuzzer_cpu.sh: --fixed DIR (a corpus directory) is needed" >&2; exit 2; }
[ -d "$seeds" ] || { echo "libfuzzer_cpu.sh: --seeds DIR (a corpus directory) is needed" >&2; exit 2; }
[ ${#builds[@]} -gt 0 ] || { echo "libfuzzer_cpu.sh: no NAME=BIN given" >&2; exit 2; }
for nb in "${builds[@]}"; do
	[ -x "${nb#*=}" ] || { echo "libfuzzer_cpu.sh: ${nb#*=} is not an executable" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# cpu BIN ARGS...: "SECONDS (cov: C ft: F corp: ...)" of one libFuzzer run
cpu() {
	/usr/bin/time -f "CPU %U %S" "$@" 2>&1 | awk '
		/^CPU / { t = $2 + $3 }
		/(DONE|INITED) / { d = $0 }
		END { sub(/.*cov:/, "cov:", d); sub(/ (lim|exec\/s):.*/, "", d); printf "%.2f s (%s)", t, d }'
}

echo "| round | build | seed pass | fuzzing $runs runs |"
echo "|---:|---|---:|---:|"
for ((r = 1; r <= rounds; r++)); do
	for nb in "${builds[@]}"; do
		name=${nb%%=*} bin=${nb#*=}
		a=$(cpu "$bin" -runs=0 -timeout=60 -max_len=1024 "$fixed")
		rm -rf "$tmp/c" && mkdir "$tmp/c" && cp -r "$seeds"/. "$tmp/c"/
		f=$(cpu "$bin" -seed=7 -runs="$runs" -timeout=60 -max_len=1024 "$tmp/c")
		echo "| $r | $name | $a | $f |"
	done
done
