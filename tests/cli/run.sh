#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# run.sh PTFUZZ DATA WORK CASE - the ptfuzz command end to end, as a user
# runs it: one behaviour per CASE (registered by tests/cli.cmake).  Each
# case works in its own fresh directory WORK; DATA holds hand-written traces.
#
# Reproduce a failure by hand:  sh tests/cli/run.sh build/x/tools/ptfuzz \
#     tests/cli/data /tmp/cli-work CASE
set -u

PTFUZZ=$1
DATA=$2
WORK=$3
CASE=$4

here=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
. "$here/runner.sh"

# expect_usage_error ARGS...: exit 2, nothing on stdout, one line on stderr
expect_usage_error() {
	pf "$@"
	expect_rc 2
	[ -s out ] && fail "'ptfuzz $last' wrote to stdout"
	[ "$(wc -l <err)" -eq 1 ] || fail "'ptfuzz $last': expected one line on stderr"
	grep -q '^ptfuzz' err || fail "'ptfuzz $last': the message does not start with ptfuzz"
}

# filler N: N events that no checker can object to (comments and ISBs),
# random enough that zstd needs several blocks for them
filler() {
	awk -v n="$1" 'BEGIN { srand(1); for (i = 0; i < n; i++) if (i % 2) print "cpu1 isb"; else printf "# filler %d %08x\n", i, int(rand() * 4294967296) }'
}

# has_casemate: the build has the import-casemate command
has_casemate() {
	"$PTFUZZ" import-casemate --help >/dev/null 2>&1
}

# ---- help, version, usage ----

case_help() {
	pf --help
	expect_rc 0
	for cmd in replay convert stats; do
		out_has "$cmd"
	done
	if has_casemate; then out_has import-casemate; fi
	out_has "exit status"
	for cmd in replay convert stats; do
		pf "$cmd" --help
		expect_rc 0
		out_has "usage: ptfuzz $cmd"
		out_has "exit status"
		pf help "$cmd"
		expect_rc 0
		out_has "usage: ptfuzz $cmd"
	done
	pf -h
	expect_rc 0
	out_has "usage: ptfuzz"
}

case_version() {
	pf --version
	expect_rc 0
	grep -q '^ptfuzz [0-9][0-9.]*$' out || fail "--version prints '$(cat out)'"
}

case_usage_errors() {
	expect_usage_error
	expect_usage_error frobnicate
	err_has "unknown command 'frobnicate' (see ptfuzz --help)"
	expect_usage_error variants extra
	expect_usage_error replay --variant no-such-variant "$DATA/clean.ptt"
	err_has "unknown variant 'no-such-variant'"
	expect_usage_error --frobnicate
	expect_usage_error replay
	expect_usage_error replay --frobnicate "$DATA/clean.ptt"
	err_has "'--frobnicate'"
	expect_usage_error replay -z "$DATA/clean.ptt"
	expect_usage_error stats
	expect_usage_error stats --frobnicate "$DATA/clean.ptt"
	expect_usage_error convert "$DATA/clean.ptt"
	expect_usage_error convert a b c
	expect_usage_error convert --binary --text "$DATA/clean.ptt" x.ptt
	expect_usage_error help frobnicate
	if has_casemate; then
		expect_usage_error import-casemate x.log
		expect_usage_error import-casemate x.log -o
	fi
}

# ---- replay ----

case_replay_clean() {
	pf replay "$DATA/clean.ptt"
	expect_rc 0
	[ "$(wc -l <out)" -eq 1 ] || fail "a clean trace gives more than its summary line"
	grep -q "^$DATA/clean.ptt: [0-9]* events, 0 violations, state 0x[0-9a-f]\{16\}$" out ||
		fail "summary line is '$(cat out)'"
	[ -s err ] && fail "stderr is not empty"
	return 0
}

case_replay_violation() {
	pf replay "$DATA/bbm.ptt"
	expect_rc 1
	grep -q "^$DATA/bbm.ptt: [0-9]* events, [1-9][0-9]* violations* (I4 x[0-9]*), state 0x[0-9a-f]\{16\}$" out ||
		fail "summary line is '$(head -n 1 out)'"
	out_has '^I4 bbm at event [0-9]* (cpu0): '
	out_has '^  rule: '
	out_has '^  signature: '
	out_has '^  old: pg@0x90000000'
	out_has '^  new: pg@0x90001000'
	# the violating event, marked, with the events before it
	out_has '^  > *[0-9]*  cpu0 pt_write pa=0x80003000 val=pg@0x90001000'
	out_has '^    *[0-9]*  cpu0 page_alloc data pa=0x90001000'
	pf replay --quiet "$DATA/bbm.ptt"
	expect_rc 1
	[ "$(wc -l <out)" -eq 1 ] || fail "--quiet prints more than the summary"
	# several files: one summary each, the worst status
	pf replay "$DATA/clean.ptt" "$DATA/bbm.ptt"
	expect_rc 1
	[ "$(grep -c ' events, ' out)" -eq 2 ] || fail "expected two summary lines"
}

case_replay_json() {
	pf replay --json "$DATA/clean.ptt" "$DATA/bbm.ptt"
	expect_rc 1
	python3 -m json.tool out >/dev/null || fail "--json output does not parse"
	python3 - out <<'EOF' || fail "--json output lacks fields"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["violations"] == len(doc["files"][1]["violations"]) > 0, doc["violations"]
clean, bbm = doc["files"]
assert clean["violations"] == [] and clean["error"] is None
assert clean["state"].startswith("0x") and clean["events"] > 0
v = bbm["violations"][0]
for key in ("id", "kind", "signature", "event", "cpu", "va", "pa", "old", "new", "what", "rule", "stale"):
    assert key in v, key
assert v["id"] == "I4" and v["kind"] == "bbm" and v["cpu"] == 0
assert isinstance(v["event"], int) and v["signature"]
assert v["old"].startswith("pg@0x90000000") and v["new"].startswith("pg@0x90001000")
EOF
}

case_replay_stdin() {
	pf replay - <"$DATA/clean.ptt"
	expect_rc 0
	out_has '^<stdin>: [0-9]* events, 0 violations'
	pf convert "$DATA/bbm.ptt" bbm.ptt.zst
	expect_rc 0
	pf replay - <bbm.ptt.zst
	expect_rc 1
	out_has '^<stdin>: [0-9]* events, [1-9][0-9]* violations* (I4 x[0-9]*)'
}

case_replay_missing_file() {
	pf replay no-such-file.ptt
	expect_rc 2
	[ "$(wc -l <err)" -eq 1 ] || fail "expected one line on stderr"
	err_has no-such-file.ptt
	# the other files are still replayed; 2 wins over 1
	pf replay "$DATA/bbm.ptt" no-such-file.ptt "$DATA/clean.ptt"
	expect_rc 2
	[ "$(grep -c ' events, ' out)" -eq 2 ] || fail "the readable files were not all replayed"
	pf replay --json no-such-file.ptt
	expect_rc 2
	python3 -m json.tool out >/dev/null || fail "--json output does not parse"
	grep -q '"error": "[^"]*no-such-file.ptt' out || fail "the JSON does not carry the error"
}

# A trace with its violation early and garbage late: the violation is
# reported, then the reader's message (file and where), and exit 2.
expect_early_violation_then_error() {
	expect_rc 2
	out_has ' events before a read error, [1-9][0-9]* violations* (I4 x[0-9]*)'
	out_has '^I4 bbm at event'
	[ "$(wc -l <err)" -eq 1 ] || fail "expected one line on stderr"
	err_has "$1"
}

case_replay_truncated_binary() {
	{ cat "$DATA/bbm.ptt"; filler 100000; } >long.ptt
	pf convert long.ptt long.ptt.zst
	expect_rc 0
	pf replay long.ptt.zst
	expect_rc 1
	[ -s err ] && fail "stderr is not a terminal, yet got output"
	size=$(wc -c <long.ptt.zst)
	head -c $((size / 2)) long.ptt.zst >cut.ptt.zst
	pf replay cut.ptt.zst
	expect_early_violation_then_error 'cut\.ptt\.zst.*byte [0-9]'
	pf replay --json cut.ptt.zst
	expect_rc 2
	python3 -m json.tool out >/dev/null || fail "--json output does not parse"
}

case_replay_garbage_tail() {
	{ cat "$DATA/bbm.ptt"; filler 100000; } >long.ptt
	pf convert long.ptt long.ptt.zst
	expect_rc 0
	{ cat long.ptt.zst; printf 'this is not zstd'; } >tail.ptt.zst
	pf replay tail.ptt.zst
	expect_early_violation_then_error 'tail\.ptt\.zst.*byte [0-9]'
}

# flip_bytes IN POS...: IN with the byte at POS inverted, as flip-POS-IN, for each POS
flip_bytes() {
	python3 -c 'import sys
b = open(sys.argv[1], "rb").read()
for p in map(int, sys.argv[2:]):
    d = bytearray(b); d[p] ^= 0xff; open("flip-%d-%s" % (p, sys.argv[1]), "wb").write(d)' "$@"
}

# A damaged byte anywhere in a binary trace: the undamaged verdict, or exit 2 with the
# damage located at its frame and no violation that the undamaged trace does not have.
case_replay_damaged_frames() {
	# a real capture (the old single-frame reader let 25 of 40 such flips report violations
	# that are not in it), and a hand-written trace with a violation
	"$PTFUZZ" convert "$DATA/../../../traces/examples/qemu-7.2.13+deb14-basic.ptt.zst" - 2>/dev/null |
		head -n 12001 >qemu-head.ptt
	for base in qemu bbm; do
		if [ $base = qemu ]; then
			cp qemu-head.ptt long.ptt
		else
			{ cat "$DATA/$base.ptt"; filler 12000; } >long.ptt
		fi
		pf convert -f long.ptt long.ptt.zst
		expect_rc 0
		pf replay long.ptt.zst
		cp out want
		grep '^I[0-9]' want | sort -u >want-ids
		size=$(wc -c <long.ptt.zst)
		step=$((size / 40))
		positions="$(seq 0 3 45) $(seq 50 "$step" $((size - 1))) $((size - 1))"
		flip_bytes long.ptt.zst $positions
		for pos in $positions; do
			mv "flip-$pos-long.ptt.zst" bad.ptt.zst
			pf replay bad.ptt.zst
			if [ "$rc" -eq 2 ]; then
				[ "$(wc -l <err)" -eq 1 ] || fail "flip at $pos: expected one line on stderr"
				grep -q '^bad\.ptt\.zst: byte [0-9]* (compressed): .*frame at byte [0-9]' err ||
					grep -q '^bad\.ptt\.zst:1:[0-9]*: ' err ||
					grep -q '^bad\.ptt\.zst: byte [0-9]* (decompressed): ' err ||
					fail "flip at $pos: the error is not located: $(cat err)"
				grep '^I[0-9]' out | sort -u >got-ids
				[ -z "$(comm -13 want-ids got-ids)" ] ||
					fail "flip at $pos: a violation the undamaged trace does not have: $(comm -13 want-ids got-ids)"
			else
				sed 's/^bad\.ptt\.zst:/long.ptt.zst:/' out | cmp -s - want ||
					fail "flip at $pos: exit $rc and not the undamaged verdict"
			fi
		done
	done
}

case_replay_bad_text_line() {
	{ cat "$DATA/bbm.ptt"; filler 10; echo 'cpu0 frobnicate va=0x1000'; filler 10; } >bad.ptt
	line=$(grep -n frobnicate bad.ptt | cut -d: -f1)
	pf replay bad.ptt
	expect_early_violation_then_error "bad\.ptt:$line:"
}

# References the trace cannot keep: exit 2, one line naming the file, line and column.
case_replay_bad_reference() {
	n=0
	while IFS='|' read -r where text; do
		n=$((n + 1))
		printf '@ptt version=1 cpus=2\ncpu0 isb\n%b' "$text" >ref$n.ptt
		pf replay ref$n.ptt
		expect_rc 2
		[ "$(wc -l <err)" -eq 1 ] || fail "ref$n.ptt: expected one line on stderr"
		err_has "^ref$n\.ptt:$where: expected "
		pf convert ref$n.ptt ref$n.ptt.zst
		expect_rc 2
		[ -e ref$n.ptt.zst ] && fail "ref$n.ptt: a trace with a bad reference was converted"
	done <<'EOF'
4:20|cpu0 switch tid=5\ncpu0 migrate tid=5 to=2\n
4:14|cpu0 isb\ncpu0 migrate tid=9 to=1\n
5:16|cpu0 thread tid=10\ncpu1 sched any tid=10\ncpu1 sched any tid=11\n
5:6|cpu1 irq_enter\ncpu1 irq_exit\ncpu1 irq_exit\n
3:13|cpu0 thread tid=1\n
EOF
	return 0
}

# a trace's own `# variant: NAME` is named when replay ran the default model instead
case_replay_names_variant() {
	pf replay -q "$DATA/variant-named.ptt"
	expect_rc 0
	out_has "names the variant anon-folio-past-vma (\`# variant:\`); this ran the default model: replay with --variant anon-folio-past-vma"
	pf replay -q --variant anon-folio-past-vma "$DATA/variant-named.ptt"
	expect_rc 1
	grep -q "names the variant" out && fail "'ptfuzz $last': the hint is printed under --variant"
	out_has "1 violation (I10 x1)"
	pf replay -q "$DATA/clean.ptt"
	expect_rc 0
	grep -q "names the variant" out && fail "'ptfuzz $last': a hint for a trace that names no variant"
	return 0
}

case_replay_deterministic() {
	for opt in "" --json; do
		"$PTFUZZ" replay $opt "$DATA/bbm.ptt" "$DATA/clean.ptt" >one 2>&1
		"$PTFUZZ" replay $opt "$DATA/bbm.ptt" "$DATA/clean.ptt" >two 2>&1
		cmp one two || fail "two replays $opt differ"
	done
	"$PTFUZZ" stats "$DATA/bbm.ptt" >one 2>&1
	"$PTFUZZ" stats "$DATA/bbm.ptt" >two 2>&1
	cmp one two || fail "two stats differ"
}

case_replay_sigpipe() {
	# many violations: more output than a pipe holds
	{
		sed '/pt_write pa=0x80003000 val=pg@0x90001000/,$d' "$DATA/bbm.ptt"
		awk 'BEGIN { for (i = 0; i < 3000; i++) printf "cpu0 pt_write pa=0x80003000 val=pg@0x9000%d000,user,af,ng\n", 1 - i % 2 }'
	} >many.ptt
	for opt in "" --json; do
		st=$({ "$PTFUZZ" replay $opt many.ptt 2>err; echo $? >rc; } | head -n 1 >/dev/null; cat rc)
		[ "$st" -lt 128 ] || fail "replay $opt | head: killed by a signal (status $st)"
		[ -s err ] && fail "replay $opt | head: wrote to stderr: $(cat err)"
	done
	st=$({ "$PTFUZZ" convert many.ptt - 2>err; echo $? >rc; } | head -n 1 >/dev/null; cat rc)
	[ "$st" -lt 128 ] || fail "convert | head: killed by a signal (status $st)"
	[ -s err ] && fail "convert | head: wrote to stderr: $(cat err)"
	return 0
}

case_replay_huge_sizes() {
	# one-line traces that name terabytes (issue 10): each op costs what it maps, a size past
	# the model's capacity is ENOMEM (README "Limits"), never an abort, a false I11 or
	# gigabytes of memory.  Memory is bounded by ulimit -v where the build allows it (not
	# under ASan, which reserves terabytes of shadow), CPU time by ulimit -t.
	h='@ptt version=1 granule=4K va_bits=48 cpus=1 method=hand'
	m='cpu0 mmap va=0x100000000 len=16T prot=rw asid=1'
	n=0
	for body in \
		'cpu0 vmap va=0xffff800010000000 len=1T pa=0x40000000' \
		'cpu0 vmap va=0xffff800010000000 len=64T pa=0x40000000' \
		'cpu0 vmap va=0xffff800040000000 len=1T pa=0x40000000 flags=0x1' \
		'cpu0 vmalloc va=0xffff800010000000 len=1T' \
		'cpu0 vmalloc va=0xffff800010000000 len=64T' \
		'cpu0 vmalloc va=0xffff800040000000 len=1T flags=0x1' \
		'cpu0 map_mem pa=0x80001000 len=1T' \
		"cpu0 mmap va=0x100000000 len=16T prot=none asid=1|cpu0 mprotect va=0x100000000 len=16T prot=rw asid=1" \
		"$m|cpu0 touch va=0x100000000 len=4K asid=1|cpu0 mprotect va=0x100000000 len=16T prot=none asid=1" \
		"$m|cpu0 madvise pageout va=0x100000000 len=16T asid=1" \
		"$m|cpu0 touch va=0x3f0000000000 len=4K asid=1|cpu0 madvise pageout va=0x100000000 len=16T asid=1" \
		"$m|cpu0 touch va=0x100000000 len=1T asid=1|cpu0 touch va=0x100000000 len=1T asid=1" \
		"$m|cpu0 touch va=0x100000000 len=8K asid=1|cpu0 mremap va=0x100000000 len=16T new_va=0x200000000000 new_len=16T asid=1 flags=0x3" \
		"$m|cpu0 touch va=0x100000000 len=8K asid=1|cpu0 munmap va=0x100000000 len=16T asid=1"; do
		n=$((n + 1))
		printf '%s\n' "$h" "$body" | tr '|' '\n' >huge$n.ptt
	done
	lim=
	(ulimit -v 1048576 && "$PTFUZZ" --version) >/dev/null 2>&1 && lim='ulimit -v 1048576;'
	for f in huge*.ptt "$DATA"/../../../corpus/mm/limits/*.ptt; do
		last="replay $f (${lim:-no ulimit -v;} ulimit -t 60)"
		sh -c "$lim ulimit -t 60; exec \"\$0\" replay \"\$1\"" "$PTFUZZ" "$f" >out 2>err
		rc=$?
		expect_rc 0
		grep -q ": [0-9]* events, 0 violations, state" out || fail "$f: summary line is '$(cat out)'"
		[ -s err ] && fail "$f: stderr is not empty"
	done
	# the refused ones are ENOMEM: failed, and nothing written
	for i in 1 2 3 4 5 6 7; do
		pf stats huge$i.ptt
		expect_rc 0
		grep -Eq '^  (vmap|vmalloc|map_mem) +1 +1 +0 ' out || fail "huge$i.ptt: not one failed op without PT writes"
	done
	return 0
}

case_replay_over_budget() {
	# a trace whose ops each cost the model's whole capacity (a touch of 1T that finds it
	# full): past the trace's loop-step budget it is rejected at the event, exit 2, one
	# located line, and nothing of the op that went over is reported
	{
		echo '@ptt version=1 granule=4K va_bits=48 cpus=1 method=hand'
		echo 'cpu0 mmap va=0x100000000 len=1T prot=rw asid=1'
		i=0
		while [ $i -lt 60 ]; do
			echo 'cpu0 touch va=0x100000000 len=1T asid=1 flags=0x1'
			i=$((i + 1))
		done
	} >budget.ptt
	pf replay budget.ptt
	expect_rc 2
	[ "$(wc -l <err)" -eq 1 ] || fail "expected one line on stderr"
	grep -q "^budget.ptt: line [0-9]*: the trace exceeds the model's loop-step budget" err ||
		fail "stderr is '$(cat err)'"
	grep -q "^budget.ptt: [0-9]* events before .*, 0 violations" out || fail "stdout is '$(cat out)'"
	# the same trace cut before the budget is reached replays clean
	head -n 12 budget.ptt >short.ptt
	pf replay short.ptt
	expect_rc 0
	return 0
}

# ---- convert ----

case_convert_roundtrip_text() {
	# the canonical text of a hand-written trace survives text -> binary -> text
	pf convert "$DATA/clean.ptt" canon.ptt
	expect_rc 0
	pf convert canon.ptt clean.ptt.zst
	expect_rc 0
	pf convert clean.ptt.zst back.ptt
	expect_rc 0
	cmp canon.ptt back.ptt || fail "text -> binary -> text changed the text"
	pf convert clean.ptt.zst -
	expect_rc 0
	cmp canon.ptt out || fail "convert to - differs from convert to a file"
	pf convert --text clean.ptt.zst forced.zst
	expect_rc 0
	cmp canon.ptt forced.zst || fail "--text did not write text"
	# end-of-line comments are kept, with their event
	printf '# a full-line comment\ncpu0 isb   # why this barrier\ncpu1 dsb ish # and this one\n' >eol.ptt
	pf convert eol.ptt eol.ptt.zst
	expect_rc 0
	pf convert eol.ptt.zst eol-back.ptt
	expect_rc 0
	grep -q '^cpu0 isb   # why this barrier$' eol-back.ptt || fail "an end-of-line comment was lost: $(cat eol-back.ptt)"
	grep -q '^cpu1 dsb ish   # and this one$' eol-back.ptt || fail "an end-of-line comment was lost: $(cat eol-back.ptt)"
	grep -q '^# a full-line comment$' eol-back.ptt || fail "a full-line comment was lost"
}

case_convert_roundtrip_binary() {
	pf convert "$DATA/bbm.ptt" a.ptt.zst
	expect_rc 0
	pf convert a.ptt.zst a.ptt
	expect_rc 0
	pf convert a.ptt b.ptt.zst
	expect_rc 0
	cmp a.ptt.zst b.ptt.zst || fail "binary -> text -> binary changed the bytes"
	pf convert --binary a.ptt forced.ptt
	expect_rc 0
	cmp a.ptt.zst forced.ptt || fail "--binary did not write binary"
	pf convert - c.ptt.zst <a.ptt
	expect_rc 0
	cmp a.ptt.zst c.ptt.zst || fail "convert from stdin differs"
}

case_convert_keeps_output_on_error() {
	{ cat "$DATA/clean.ptt"; echo 'cpu0 frobnicate va=0x1000'; } >bad.ptt
	mkdir dst
	for out in dst/old.ptt dst/old.ptt.zst; do
		echo "precious" >"$out"
		ls -a dst >before
		pf convert bad.ptt "$out"
		expect_rc 2
		err_has "$out exists; -f replaces it"
		[ "$(cat "$out")" = precious ] || fail "convert replaced $out without -f"
		pf convert -f bad.ptt "$out"
		expect_rc 2
		[ "$(wc -l <err)" -eq 1 ] || fail "expected one line on stderr"
		err_has 'bad\.ptt:[0-9]*:'
		[ "$(cat "$out")" = precious ] || fail "a failed convert changed $out"
		ls -a dst >after
		cmp before after || fail "a failed convert left files behind: $(diff before after)"
	done
	pf convert no-such-file.ptt dst/x.ptt
	expect_rc 2
	err_has no-such-file.ptt
	[ -e dst/x.ptt ] && fail "a failed convert created its output"
	return 0
}

# convert replaces an existing OUT only with -f, keeps its mode, writes through a symlink
case_convert_existing_output() {
	pf convert "$DATA/clean.ptt" want.ptt
	expect_rc 0
	echo old >out.ptt
	chmod 0640 out.ptt
	expect_usage_error convert "$DATA/clean.ptt" out.ptt
	err_has "out.ptt exists; -f replaces it"
	[ "$(cat out.ptt)" = old ] || fail "convert without -f changed out.ptt"
	pf convert -f "$DATA/clean.ptt" out.ptt
	expect_rc 0
	cmp want.ptt out.ptt || fail "convert -f did not replace out.ptt"
	[ "$(stat -c %a out.ptt)" = 640 ] || fail "convert -f reset the mode to $(stat -c %a out.ptt)"
	pf convert --force "$DATA/clean.ptt" out.ptt
	expect_rc 0
	# a symlink: written through, the link stays
	mkdir real
	echo old >real/target.ptt
	chmod 0604 real/target.ptt
	ln -s real/target.ptt link.ptt
	expect_usage_error convert "$DATA/clean.ptt" link.ptt
	pf convert -f "$DATA/clean.ptt" link.ptt
	expect_rc 0
	[ -L link.ptt ] || fail "convert replaced the symlink by a file"
	cmp want.ptt real/target.ptt || fail "convert did not write through the symlink"
	[ "$(stat -c %a real/target.ptt)" = 604 ] || fail "the symlink's target lost its mode"
	ls -a . real | grep -q tmp && fail "temporary files left: $(ls -a . real)"
	ln -s real/missing.ptt dangling.ptt
	pf convert -f "$DATA/clean.ptt" dangling.ptt
	expect_rc 2
	err_has "dangling.ptt: cannot resolve the symlink"
	[ -e real/missing.ptt ] && fail "a dangling symlink was followed"
	return 0
}

# sig_dfl CMD...: exec CMD with SIGINT at its default action
sig_dfl() {
	exec python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$@"
}

# SIGINT/SIGTERM/SIGHUP during convert or replay --record: the temporary file goes with it
case_interrupted_write_leaves_nothing() {
	filler 4000000 >big.ptt
	for sig in INT TERM HUP; do
		for cmd in convert replay; do
			mkdir -p "d$sig$cmd"
			# a background job of sh starts with SIGINT ignored (which ptfuzz respects): undo that
			if [ $cmd = convert ]; then
				sig_dfl "$PTFUZZ" convert big.ptt "d$sig$cmd/out.ptt.zst" 2>err &
			else
				sig_dfl "$PTFUZZ" replay -q --record "d$sig$cmd/out.ptt.zst" big.ptt >out 2>err &
			fi
			pid=$!
			# wait for the temporary file, then interrupt (up to a minute: CI machines are loaded)
			for i in $(seq 1 600); do
				ls "d$sig$cmd" | grep -q tmp && break
				sleep 0.1
			done
			ls "d$sig$cmd" | grep -q tmp || fail "$cmd: no temporary file appeared"
			kill -$sig $pid
			wait $pid
			st=$?
			[ $st -gt 128 ] || fail "$cmd, SIG$sig: exit $st, expected death by the signal"
			[ -z "$(ls -A "d$sig$cmd")" ] || fail "$cmd, SIG$sig left: $(ls -A "d$sig$cmd")"
		done
	done
}

# ---- stats ----

case_stats() {
	pf stats "$DATA/clean.ptt"
	expect_rc 0
	out_has "^$DATA/clean.ptt: [0-9]* events, 0 violations"
	writes=$(grep -c pt_write "$DATA/clean.ptt")
	out_has "^    pt_write  *$writes$"
	out_has '^    vale1is  *1$'
	out_has '^    ishst  *4$'
	out_has '^  tables allocated  *4$'
	out_has '^  pages freed  *1$'
	pf stats "$DATA/bbm.ptt"
	expect_rc 1
	pf stats --json "$DATA/clean.ptt" "$DATA/bbm.ptt"
	expect_rc 1
	python3 - out <<EOF || fail "stats --json output is wrong"
import json, sys
doc = json.load(open(sys.argv[1]))
c = doc["files"][0]["counters"]
assert c["by_kind"]["pt_write"] == $writes, c["by_kind"]
assert c["tlbi_by_op"]["vale1is"] == 1 and c["dsb_by_domain"]["ish"] == 1
assert doc["files"][1]["violations"] >= 1
assert doc["total"]["tables_allocated"] == 8
EOF
}

# ---- import-casemate (registered when the build has it) ----

case_import_casemate() {
	pf import-casemate "$DATA/casemate-bbm.log" -o bbm.ptt
	expect_rc 0
	grep -q '^@ptt .*method=casemate' bbm.ptt || fail "the import has no casemate header"
	pf replay bbm.ptt
	expect_rc 1
	out_has '^I4 bbm at event'
	pf import-casemate --output=bbm.ptt.zst "$DATA/casemate-bbm.log"
	expect_rc 0
	pf convert bbm.ptt.zst back.ptt
	expect_rc 0
	cmp bbm.ptt back.ptt || fail "the binary import differs from the text one"
	pf import-casemate "$DATA/bbm.ptt" -o x.ptt
	expect_rc 2
	[ "$(wc -l <err)" -eq 1 ] || fail "expected one line on stderr"
	err_has 'bbm\.ptt:1:'
	[ -e x.ptt ] && fail "a failed import created its output"
	return 0
}

case_replay_record() {
	pf replay --record rec.ptt "$DATA/ops-bbm.ptt"
	expect_rc 1
	out_has '^I4 bbm at event'
	grep -q '^cpu0 begin fault' rec.ptt || fail "the recording lacks the model's events"
	grep -q '^cpu[0-9]* \(touch\|mmap\) ' rec.ptt && fail "the recording still has ops-level events"
	ids() { grep -o '^I[0-9]* [a-z/-]*' out | sort -u; }
	ids >want
	pf replay rec.ptt
	expect_rc 1
	ids >got
	cmp want got || fail "the recording replays to another verdict: $(cat got)"
	pf replay --record rec.ptt.zst "$DATA/ops-bbm.ptt"
	pf convert rec.ptt.zst rec2.ptt
	cmp rec.ptt rec2.ptt || fail "binary and text recordings differ"
	pf replay --json "$DATA/ops-bbm.ptt"
	expect_rc 1
	python3 - out <<'PY' || fail "the JSON report lacks the arch-level interleaving"
import json, sys
v = json.load(open(sys.argv[1]))["files"][0]["violations"][0]
il = v["interleaving"]
assert il and il[-1]["violating"] and {e["cpu"] for e in il} >= {0, 1}, il
assert v["trace"] and "pt_write" in v["trace"][-1]["event"]
PY
	expect_usage_error replay --record new.ptt "$DATA/ops-bbm.ptt" "$DATA/clean.ptt"
	printf 'cpu0 mmap va=0x1000 len=4K\ncpu0 bogus\n' >bad.ptt
	pf replay --record new.ptt bad.ptt
	expect_rc 2
	[ -e new.ptt ] && fail "a failed replay left a recording"
	return 0
}

case_variants() {
	pf variants
	expect_rc 0
	for v in default mremap-pmd-no-rmap-lock mremap-flush-after-ptl-drop kernel-pgtable-flush-no-isb \
		contpte-no-unfold vmalloc-pre-contpte vmalloc-no-lazy-mmu pgtable-fixmap-twice \
		mremap-no-move-pmd mprotect-no-batch; do
		out_has "^  $v "
	done
	out_has 'seed: 004'
	out_has 'caught by I1'
	pf variants --json
	expect_rc 0
	python3 -m json.tool out >/dev/null || fail "variants --json is not JSON"
	grep -q '"kind": *"baseline"' out || fail "no baseline in the JSON"
	pf replay --variant mremap-leaf-only-flush "$DATA/clean.ptt"
	expect_rc 0
}

case_convert_to_fifo() {
	# a device or FIFO is written in place, never replaced by a renamed file
	mkfifo fifo
	cat fifo >got &
	reader=$!
	pf convert "$DATA/clean.ptt" fifo
	expect_rc 0
	wait $reader
	[ -p fifo ] || fail "convert replaced the FIFO with a file"
	pf convert "$DATA/clean.ptt" want.ptt
	cmp got want.ptt || fail "what came through the FIFO differs from the converted file"
}

# ---- the conventions every command keeps (-o OUT, -f, help CMD) ----

# convert takes its output as -o OUT too: the same bytes as IN OUT, and not both at once
case_convert_output_option() {
	pf convert "$DATA/clean.ptt" want.ptt.zst
	expect_rc 0
	pf convert "$DATA/clean.ptt" -o got.ptt.zst
	expect_rc 0
	cmp want.ptt.zst got.ptt.zst || fail "convert -o wrote other bytes than convert IN OUT"
	pf convert --output=got.ptt want.ptt.zst
	expect_rc 0
	cmp got.ptt "$DATA/clean.ptt" >/dev/null 2>&1 || { pf convert "$DATA/clean.ptt" want.ptt &&
		cmp got.ptt want.ptt; } || fail "convert --output=OUT differs from convert IN OUT"
	expect_usage_error convert "$DATA/clean.ptt" x.ptt -o y.ptt
	err_has "expected IN and -o OUT, got 2 arguments"
	[ -e x.ptt ] || [ -e y.ptt ] && fail "a refused convert wrote its output"
	expect_usage_error convert "$DATA/clean.ptt" -o got.ptt.zst
	err_has "got.ptt.zst exists; -f replaces it"
	pf convert -f "$DATA/clean.ptt" -o got.ptt.zst
	expect_rc 0
	cmp want.ptt.zst got.ptt.zst || fail "convert -f -o did not replace got.ptt.zst"
}

# import_replaces_only_with_f CMD IN OUT: CMD IN -o OUT refuses an existing OUT (left as it
# was) and replaces it with -f, with the same bytes as a fresh import
import_replaces_only_with_f() {
	pf "$1" "$2" -o "want-$3"
	expect_rc 0
	echo old >"$3"
	expect_usage_error "$1" "$2" -o "$3"
	err_has "$3 exists; -f replaces it"
	[ "$(cat "$3")" = old ] || fail "$1 without -f changed $3"
	pf "$1" -f "$2" -o "$3"
	expect_rc 0
	cmp "want-$3" "$3" || fail "$1 -f did not replace $3"
}

# the importers replace an existing OUT only with -f, as convert does
case_import_existing_output() {
	ftrace=$here/../traces/examples/ftrace-6.1-workload.ftrace
	import_replaces_only_with_f import-ftrace "$ftrace" out.ptt
	pf import-ftrace --force "$ftrace" -o - 
	expect_rc 0
	cmp want-out.ptt out || fail "import-ftrace -o - differs from the file"
	if has_casemate; then
		import_replaces_only_with_f import-casemate "$DATA/casemate-bbm.log" bbm.ptt
	fi
	return 0
}

# every command: `ptfuzz help CMD` is its --help; a command that writes a file names it
# with -o and replaces an existing one only with -f, and says so in its help
case_output_conventions() {
	pf --help
	expect_rc 0
	cmds=$(sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' out | sort -u)
	[ -n "$cmds" ] || fail "no commands in ptfuzz --help"
	for cmd in $cmds; do
		[ "$cmd" = help ] && continue
		pf "$cmd" --help
		expect_rc 0
		cp out want
		pf help "$cmd"
		expect_rc 0
		cmp out want || fail "'ptfuzz help $cmd' differs from 'ptfuzz $cmd --help'"
		out_has "usage: ptfuzz $cmd"
		out_has "exit status"
	done
	for cmd in convert minimize import-ftrace import-casemate; do
		echo "$cmds" | grep -qx "$cmd" || continue
		pf help "$cmd"
		out_has "^  -o, --output"
		out_has "^  -f, --force"
	done
	pf help campaign
	out_has "^  -o, --out DIR"
	# -o DIR is --out DIR: what is missing is then the engine, not the directory
	expect_usage_error campaign -o camp
	err_has "engine"
	grep -q -e "--out DIR is required" err && fail "campaign does not take -o DIR for --out DIR"
	return 0
}

# ---- --json and -q ----

# pty_stderr OUT ARGS...: run ptfuzz with stderr on a terminal (what it shows there into OUT)
pty_stderr() {
	o=$1
	shift
	python3 - "$o" "$PTFUZZ" "$@" <<'PY'
import os, pty, subprocess, sys
m, s = pty.openpty()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=s)
os.close(s)
data = b""
while True:
    try:
        d = os.read(m, 4096)
    except OSError:
        break
    if not d:
        break
    data += d
p.wait()
open(sys.argv[1], "wb").write(data)
PY
}

# stats -q: no progress on a terminal, the same counters
case_stats_quiet() {
	{ echo '@ptt version=1 granule=4K va_bits=48 cpus=2'; filler 2200000; } >big.ptt
	pty_stderr tty.txt stats big.ptt
	grep -q 'M events' tty.txt || fail "stats shows no progress on a terminal: $(head -c 200 tty.txt)"
	pty_stderr tty-q.txt stats -q big.ptt
	[ -s tty-q.txt ] && fail "stats -q shows on the terminal: $(head -c 200 tty-q.txt)"
	pf stats big.ptt
	cp out want
	pf stats --quiet big.ptt
	expect_rc 0
	cmp out want || fail "stats -q changes the counters"
	[ -s err ] && fail "stats -q wrote to stderr"
	return 0
}

# minimize --json: the summary as one document, the same for the same IN, that agrees with OUT
case_minimize_json() {
	pf minimize "$DATA/bbm.ptt" -o min.ptt --json
	expect_rc 0
	cp out first.json
	sig=$("$PTFUZZ" replay min.ptt | sed -n 's/^  signature: //p' | head -n 1)
	[ -n "$sig" ] || fail "min.ptt shows no violation"
	python3 - out min.ptt "$sig" "$DATA/bbm.ptt" <<'PY' || fail "minimize --json: wrong document"
import json, sys
d = json.load(open(sys.argv[1]))
ops = [l for l in open(sys.argv[2]) if l.strip() and not l.startswith(("#", "@"))]
assert d["output"] == sys.argv[2] and d["input"] == sys.argv[4], d
assert d["events_out"] == len(ops) and 0 < d["events_out"] <= d["events_in"], (d, len(ops))
assert d["signature"] == sys.argv[3] and d["invariant"] == sys.argv[3].split("/")[0], d
assert d["variant"] is None and d["one_minimal"] is True and d["replays"] > 0 and d["rounds"] > 0, d
PY
	pf minimize "$DATA/bbm.ptt" -o min.ptt -f -q --json
	expect_rc 0
	cmp out first.json || fail "minimize --json differs between two runs (or with -q)"
	[ -s err ] && fail "minimize -q --json wrote to stderr"
	pf minimize "$DATA/bbm.ptt" -o min.ptt -f --same-invariant --json
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["signature"] is None and d["invariant"] == "I4", d' out ||
		fail "--same-invariant --json: $(cat out)"
	expect_usage_error minimize "$DATA/bbm.ptt" -o - --json
	return 0
}

# import-ftrace / import-casemate --json: what the import saw, as the trace's own comment says
case_import_json() {
	ftrace=$here/../traces/examples/ftrace-6.1-workload.ftrace
	pf import-ftrace --json "$ftrace" -o ft.ptt
	expect_rc 0
	[ -s err ] && fail "import-ftrace --json wrote to stderr"
	python3 - out ft.ptt <<'PY' || fail "import-ftrace --json disagrees with the trace"
import json, re, sys
d = json.load(open(sys.argv[1]))
head = [l for l in open(sys.argv[2]) if l.startswith("# imported by")][0]
want = dict(zip(["lines", "syscalls", "failed", "ops", "evidence", "skipped", "unpaired", "ignored", "lost", "asids"],
                map(int, re.findall(r"(\d+) (?:lines|syscalls|failed|ops|kernel|kept|unpaired|other|lost|address)", head))))
assert len(want) == 10, head
for k, v in want.items():
    assert d[k] == v, (k, d[k], v)
ops = [l for l in open(sys.argv[2]) if re.match(r"cpu\d+ (mmap|mremap|mprotect|munmap|madvise|touch)", l)]
assert d["ops"] == len(ops) and d["cpus"] == 2 and d["output"] == sys.argv[2], d
PY
	expect_usage_error import-ftrace --json "$ftrace" -o -
	has_casemate || return 0
	pf import-casemate --json "$DATA/casemate-bbm.log" -o cm.ptt
	expect_rc 0
	python3 - out "$DATA/casemate-bbm.log" <<'PY' || fail "import-casemate --json disagrees with the log"
import json, sys
d = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()
verdict = [l[1:].strip() for l in lines if l.startswith("!")]
assert d["records"] == sum(l.lstrip().startswith("(") for l in lines), d
assert d["verdict"] == (verdict[0] if verdict else None), d
assert d["events"] >= d["records"] and d["cpus"] >= 1, d
PY
	expect_usage_error import-casemate --json "$DATA/casemate-bbm.log" -o -
	return 0
}

# every command that takes --json says so in its help and prints one JSON document with it
case_json_everywhere() {
	for cmd in replay stats compare variants minimize campaign triage import-ftrace import-casemate; do
		[ "$cmd" = import-casemate ] && ! has_casemate && continue
		pf help "$cmd"
		out_has "^  *--json"
	done
	for cmd in replay stats minimize campaign triage; do
		pf help "$cmd"
		out_has "^  -q, --quiet"
	done
	for args in "replay --json $DATA/bbm.ptt" "stats --json $DATA/bbm.ptt" "variants --json" \
		"compare --json --variant mremap-leaf-only-flush $DATA/ops-bbm.ptt"; do
		# shellcheck disable=SC2086
		pf $args
		python3 -m json.tool out >/dev/null || fail "'ptfuzz $args' is not one JSON document"
	done
	return 0
}

command -v "case_$CASE" >/dev/null 2>&1 || { echo "no test case '$CASE'" >&2; exit 1; }
"case_$CASE"
echo "ok [$CASE]"
