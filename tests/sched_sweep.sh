#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# sched_sweep.sh PTFUZZ ROOT [SPAN] - race reproducers must not hang on one step count.
#
# A race trace says where each thread stops with `sched ... steps=N`.  When a
# routine changes shape (a lock more or less, a read moved) the window moves by
# a step or two, and a reproducer that fires at exactly one N silently stops
# reproducing.  For every trace with a `sched ... steps=N` line, each such line
# in turn is replayed with N-SPAN .. N+SPAN (N >= 1, default SPAN 2):
#   - a variant reproducer (corpus/regressions/variants/, `# variant:`) must fire
#     one of the invariants its `# expect:` line names at its own N and at both
#     neighbours N-1 and N+1 (N-1 only if it is >= 1): N lies inside the window,
#     not on its edge, so a routine that gains or loses a scheduling point still
#     reproduces; and the default model must give its `# expect-default:` verdict
#     (none, if there is no such line) for all N-SPAN .. N+SPAN;
#   - a race regression of the default model (corpus/mm/, `# expect: clean`)
#     must stay clean for all.
set -u
ptfuzz=$1 root=$2 span=${3:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 traces=0 runs=0

# the invariant ids of a replay summary line: "I1 I2" (empty: clean)
ids() {
	"$ptfuzz" replay -q "$@" 2>/dev/null | tail -n 1 | grep -o 'I[0-9]* x' | sed 's/ x//' | sort -u | tr '\n' ' ' |
		sed 's/ $//'
}

# the ids named on a `# KEY:` line, sorted the same way
want() {
	grep -m1 "^# $1:" "$2" | sed "s/^# $1://" | tr ' ' '\n' | grep '^I' | sort -u | tr '\n' ' ' | sed 's/ $//'
}

for f in "$root"/corpus/regressions/variants/*.ptt $(find "$root/corpus/mm" -name '*.ptt' | sort); do
	grep -q '^cpu[0-9]* sched .*steps=[0-9]' "$f" || continue
	variant=$(grep -m1 '^# variant:' "$f" | sed 's/^# variant: *//')
	if [ -z "$variant" ] && ! grep -q '^# expect: *clean' "$f"; then
		continue	# a default-model trace that expects a finding: not a race regression
	fi
	traces=$((traces + 1))
	dflt=$(want expect-default "$f")
	expect=$(want expect "$f")
	name=${f#"$root"/}
	grep -n '^cpu[0-9]* sched .*steps=[0-9]' "$f" | cut -d: -f1 | while read -r line; do
		n=$(sed -n "${line}p" "$f" | sed 's/.*steps=\([0-9]*\).*/\1/')
		fired=
		d=-$span
		while [ "$d" -le "$span" ]; do
			m=$((n + d))
			d=$((d + 1))
			[ "$m" -ge 1 ] || continue
			sed "${line}s/steps=[0-9]*/steps=$m/" "$f" > "$tmp/t.ptt"
			got=$(ids "$tmp/t.ptt")
			if [ "$got" != "$dflt" ]; then
				echo "FAIL $name:$line steps=$m: the default model gives '${got:-clean}', expected '${dflt:-clean}'"
				echo fail >> "$tmp/failed"
			fi
			if [ -n "$variant" ]; then
				got=$(ids --variant "$variant" "$tmp/t.ptt")
				for i in $got; do
					case " $expect " in *" $i "*) fired="$fired $m" ;; esac
				done
			fi
			echo run >> "$tmp/runs"
		done
		if [ -n "$variant" ]; then
			missed=
			for m in $((n - 1)) $n $((n + 1)); do
				[ "$m" -ge 1 ] || continue
				case " $fired " in *" $m "*) ;; *) missed="$missed $m" ;; esac
			done
			if [ -n "$missed" ]; then
				echo "FAIL $name:$line: $variant fires none of {$expect} at steps=${missed# }" \
					"(fires at: $(echo ${fired:-none} | tr " " "\n" | sort -u | tr "\n" " ")of $n +-$span): the step count is not inside its window"
				echo fail >> "$tmp/failed"
			else
				echo "ok   $name:$line: $variant fires at steps=$(echo $fired | tr ' ' '\n' | sort -un | tr '\n' ' ')(of $n +-$span)"
			fi
		fi
	done
done
[ -f "$tmp/runs" ] && runs=$(wc -l < "$tmp/runs")
[ -f "$tmp/failed" ] && fail=1
echo "sched_sweep: $traces race traces, $runs step counts replayed, span $span"
[ "$traces" -ge 5 ] || { echo "FAIL: only $traces race traces found"; fail=1; }
exit $fail
