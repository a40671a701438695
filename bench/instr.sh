#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# instr.sh - instructions per exec of ptfuzz-bench-exec's program mix, counted by callgrind:
# the noise-free measure of the model's per-exec cost on a loaded machine (CPU time and
# exec/s move with the load; the instruction count does not).
#
#   bench/instr.sh [BUILD_DIR] [EXECS] [OPS...]     (defaults: build/release 500 8 32)
#
# For each OPS: one run of EXECS execs and one of a single exec, both `--mode reset` and
# seed 1, with every checker and with --no-checkers; the difference over EXECS - 1 is what
# one exec costs, without the process's start-up and the first session's creation.  Prints
# a Markdown table.  Two builds compared side by side are two runs of this script.
# Needs valgrind (Debian package valgrind); exits 2 without it.  Counts are exact and
# repeatable for one binary, but valgrind counts each byte of a `rep stosb` memset as an
# instruction: memset-heavy code looks dearer than it runs (see bench/RESULTS.md).
set -eu
build=${1:-build/release}
execs=${2:-500}
shift $(($# < 2 ? $# : 2))
ops=${*:-8 32}
bin=$build/bench/ptfuzz-bench-exec
command -v valgrind >/dev/null 2>&1 || { echo "instr.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
[ -x "$bin" ] || { echo "instr.sh: $bin not built (cmake --build --preset release)" >&2; exit 2; }
case $execs in
'' | *[!0-9]* | 0 | 1) echo "instr.sh: EXECS must be a number above 1, not '$execs'" >&2; exit 2 ;;
esac

# instructions of one run: callgrind's "Collected" line
count() {
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" --reps 1 --mode reset --seed 1 "$@" 2>&1 >/dev/null |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

echo "| ops | instructions per exec | without checkers | checkers' share |"
echo "|---:|---:|---:|---:|"
for n in $ops; do
	case $n in '' | *[!0-9]*) echo "instr.sh: OPS must be numbers, not '$n'" >&2; exit 2 ;; esac
	one=$(count --ops "$n" --execs 1)
	many=$(count --ops "$n" --execs "$execs")
	one_nc=$(count --ops "$n" --execs 1 --no-checkers)
	many_nc=$(count --ops "$n" --execs "$execs" --no-checkers)
	[ -n "$one" ] && [ -n "$many" ] && [ -n "$one_nc" ] && [ -n "$many_nc" ] ||
		{ echo "instr.sh: callgrind gave no count for $n ops" >&2; exit 2; }
	awk -v n="$n" -v a="$one" -v b="$many" -v c="$one_nc" -v d="$many_nc" -v e="$execs" 'BEGIN {
		w = (b - a) / (e - 1); o = (d - c) / (e - 1)
		printf "| %d | %.0f | %.0f | %.0f %% |\n", n, w, o, 100 * (w - o) / w }'
done
