#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# ratio.sh - two builds' per-exec speed by CPU time, alternated in one run: the measure
# that holds on a loaded machine (absolute exec/s move with the load; the per-round ratio
# of two runs back to back much less).
#
#   bench/ratio.sh OLD NEW [ROUNDS]     (OLD, NEW: ptfuzz-bench-exec binaries; ROUNDS: 21)
#
# Copy each build's build/release/bench/ptfuzz-bench-exec out of its tree first.  For 8
# and then 32 ops, each round runs OLD and then NEW with `--reps 3 --mode reset --ops N
# --execs E` (E = 4000 / 1000; each run reports the median of its 3 reps, exec/s per core
# by CPU time).  Prints, per size, each build's median over the rounds with its range, and
# the median (range) of the per-round ratio NEW / OLD.  Exits 2 on bad arguments.
set -eu
if [ $# -lt 2 ] || [ $# -gt 3 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
	echo "usage: bench/ratio.sh OLD NEW [ROUNDS] (OLD, NEW: executable ptfuzz-bench-exec binaries)" >&2
	exit 2
fi
old=$1 new=$2 rounds=${3:-21}
case $rounds in '' | *[!0-9]* | 0)
	echo "bench/ratio.sh: ROUNDS: expected a positive number, got '$rounds'" >&2
	exit 2 ;;
esac
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
rate() {
	"$1" --reps 3 --mode reset --ops "$2" --execs "$3" 2>&1 | sed -n 's/.*reset=\([0-9]*\).*/\1/p'
}
for ops in 8 32; do
	execs=$([ $ops = 8 ] && echo 4000 || echo 1000)
	for r in $(seq "$rounds"); do
		echo "$ops $(rate "$old" $ops $execs) $(rate "$new" $ops $execs)"
	done
done >"$raw"
med='{ v[NR] = $1 } END { printf "%s median %s (%s-%s)\n", name, v[int((NR + 1) / 2)], v[1], v[NR] }'
for ops in 8 32; do
	awk -v o=$ops '$1 == o { print $2 }' "$raw" | sort -n | awk -v name="ops $ops old" "$med"
	awk -v o=$ops '$1 == o { print $3 }' "$raw" | sort -n | awk -v name="ops $ops new" "$med"
	awk -v o=$ops '$1 == o { printf "%.3f\n", $3 / $2 }' "$raw" | sort -n |
		awk -v name="ops $ops ratio" '{ v[NR] = $1 } END { printf "%s median %.2f (%.2f-%.2f)\n", name, v[int((NR + 1) / 2)], v[1], v[NR] }'
done
