#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# tests/campaign.sh PTFUZZ SRC WORK CASE - one behaviour of `ptfuzz campaign` /
# `ptfuzz triage` per case (tests/campaign.cmake).  Cases that run a real
# engine need its binary next to PTFUZZ's build tree (build/fuzz-fast or
# build/fuzz, build/afl) and exit 77 (skipped) without it.
set -u
ptfuzz=$1 src=$2 work=$3 case=$4
v=mremap-leaf-only-flush
build=$(cd "$(dirname "$ptfuzz")/../.." && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

fail() { echo "FAIL $case: $*" >&2; exit 1; }
skip() { echo "SKIP $case: $*" >&2; exit 77; }

libfuzzer_bin() {
	for b in "$build/fuzz-fast/fuzzers/ops_invariants_fuzz" "$build/fuzz/fuzzers/ops_invariants_fuzz"; do
		[ -x "$b" ] && { echo "$b"; return 0; }
	done
	skip "no libFuzzer harness (cmake --preset fuzz-fast && cmake --build --preset fuzz-fast)"
}
need_afl() {
	command -v afl-fuzz >/dev/null || skip "afl-fuzz not installed"
	[ -x "$build/afl/fuzzers/ops_invariants_afl" ] || skip "no AFL++ harness (cmake --preset afl && cmake --build --preset afl)"
	[ -r "$build/release/fuzzers/libptfuzz_afl_mutator.so" ] || skip "no custom mutator (release preset)"
}

# exactly one line on stderr and exit 2
one_line_2() {
	st=0
	"$ptfuzz" "$@" >out 2>err || st=$?
	[ $st -eq 2 ] || fail "'$*' exited $st, expected 2"
	[ "$(wc -l <err)" -eq 1 ] || fail "'$*' printed $(wc -l <err) lines on stderr: $(cat err)"
}

# DIR's findings are whole: index.json, and every finding directory has its four files,
# repro.ptt replays under the variant to the finding's signature; no temporaries
check_findings() {	# DIR MIN_FINDINGS
	d=$1
	[ -f "$d/findings/index.json" ] || fail "no $d/findings/index.json"
	python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$d/findings/index.json" ||
		fail "index.json is not JSON"
	n=0
	for f in "$d"/findings/*/; do
		[ -d "$f" ] || continue
		n=$((n + 1))
		for x in crash.bin repro.ptt report.txt report.json; do
			[ -s "$f$x" ] || fail "$f$x missing or empty"
		done
		python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$f/report.json" || fail "$f/report.json is not JSON"
		check_report "$f"
		sig=$(sed -n 's/^# target: //p' "$f/repro.ptt")
		[ -n "$sig" ] || fail "$f/repro.ptt names no target"
		st=0
		"$ptfuzz" replay --variant "$v" "$f/repro.ptt" >rep.out || st=$?
		[ $st -eq 1 ] && grep -q "signature: $sig\$" rep.out || fail "$f/repro.ptt does not replay to $sig"
		grep -q "\"signature\": \"$sig\"" "$d/findings/index.json" || fail "index.json lacks $sig"
	done
	[ $n -ge "$2" ] || fail "$n findings in $d, expected at least $2"
	if find "$d" -name '.tmp-*' | grep -q .; then
		fail "temporaries left: $(find "$d" -name '.tmp-*' | head -3)"
	fi
}

# a finding's report: the summary line, the invariant's sentence, the minimal ops (those of
# repro.ptt), then the replay's report; report.json the same facts around the replay's JSON
check_report() {	# FINDING_DIR
	r=$1/report.txt
	sig=$(sed -n 's/^# target: //p' "$1/repro.ptt")
	[ "$(sed -n 1p "$r" | grep -c '^summary: [a-z_0-9]*[: ].')" -eq 1 ] || fail "$r: no summary first: $(sed -n 1p "$r")"
	grep -q "^invariant: I[0-9]* [a-z/-]*: [A-Z]" "$r" || fail "$r: no invariant sentence"
	grep -q "^signature: $sig\$" "$r" || fail "$r: no signature line"
	grep -q '^found: .* campaign.*variant ' "$r" || fail "$r: no found: line"
	grep '^cpu' "$1/repro.ptt" | sed 's/^/  /' >ops.want
	sed -n '/^minimal ops/,/^$/p' "$r" | grep '^  cpu' >ops.got || true
	[ -s ops.want ] && cmp -s ops.want ops.got || fail "$r: the minimal ops are not repro.ptt's"
	grep -q "^  signature: $sig\$" "$r" || fail "$r: the replay's report is not in it"
	python3 - "$1/report.json" "$sig" "$1/repro.ptt" <<'PY' || fail "$1/report.json: wrong facts"
import json, sys
d = json.load(open(sys.argv[1]))
ops = [l.rstrip("\n") for l in open(sys.argv[3]) if l.startswith("cpu")]
assert d["signature"] == sys.argv[2] and d["summary"] and d["rule"] and d["ops"] == ops, d
assert d["found"] and all("variant" in x for x in d["found"]), d["found"]
assert any(v["signature"] == sys.argv[2] for f in d["replay"]["files"] for v in f["violations"])
PY
}

# wait (up to $2 s) until a finding directory exists in $1
wait_finding() {
	i=0
	while [ $i -lt $(($2 * 10)) ]; do
		ls -d "$1"/findings/I*/ >/dev/null 2>&1 && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

no_engines_left() {	# DIR
	sleep 1
	if ps -eo args | grep -F "$1" | grep -v grep | grep -q -e ops_invariants -e afl-fuzz; then
		fail "engine processes of $1 still run"
	fi
}

case $case in
bad_args)
	one_line_2 campaign --engine honggfuzz --time 10s --out c
	mkdir other && echo x >other/file
	one_line_2 campaign --engine libfuzzer --time 10s --out other
	one_line_2 campaign --engine libfuzzer --time 10x --out c
	one_line_2 campaign --engine libfuzzer --jobs 0 --time 10s --out c
	one_line_2 campaign --engine libfuzzer --time 10s --variant no-such-variant --out c
	one_line_2 campaign --engine libfuzzer --time 10s --fuzzer /nonexistent/fuzz --out c
	[ ! -e c ] || fail "a refused campaign created its directory"
	one_line_2 campaign --resume --out other
	one_line_2 campaign --status other
	one_line_2 campaign --plot other
	one_line_2 campaign --plot other --json
	one_line_2 triage other
	# a campaign of one engine / variant is not resumed as another
	"$ptfuzz" campaign --engine libfuzzer --fuzzer /bin/true --time 2s --variant $v --out c >/dev/null 2>&1
	[ -f c/campaign.json ] || fail "no campaign.json"
	one_line_2 campaign --engine afl --time 2s --variant $v --out c
	one_line_2 campaign --engine libfuzzer --time 2s --variant lazy-mmu-irq --out c
	one_line_2 campaign --engine libfuzzer --time 2s --out c
	grep -q "variant $v" err || fail "the refusal does not name the campaign's variant: $(cat err)"
	;;
dedup)
	# two crash files, one program (byte 0's reserved bits differ): one finding, two crashes
	st=0
	"$ptfuzz" campaign --engine libfuzzer --fuzzer /bin/true --time 2s --variant $v --out c >out 2>err || st=$?
	[ $st -eq 0 ] || fail "a campaign without crashes exited $st: $(cat err)"
	seed=$src/corpus/fuzz/ops_invariants/regressions-variants-$v.bin
	cp "$seed" c/crashes/crash-one
	python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[0]^=0x40; open(sys.argv[2],'wb').write(b)" \
		"$seed" c/crashes/crash-two
	cmp -s c/crashes/crash-one c/crashes/crash-two && fail "the two crashes are the same bytes"
	st=0
	"$ptfuzz" campaign --resume --fuzzer /bin/true --time 2s --out c >out 2>err || st=$?
	[ $st -eq 1 ] || fail "campaign with two crashes exited $st: $(cat err)"
	check_findings c 1
	[ "$(ls -d c/findings/*/ | wc -l)" -eq 1 ] || fail "two crashes of one signature made $(ls -d c/findings/*/ | wc -l) findings"
	grep -q '"count": 2' c/findings/index.json || fail "the finding does not count two crashes: $(cat c/findings/index.json)"
	grep -q "^1 .* 2 " out || fail "the summary does not show 2 crashes: $(cat out)"
	# ptfuzz triage: it still reproduces (exit 1); under the default model it does not (exit 0)
	st=0
	"$ptfuzz" triage c >tri.out || st=$?
	[ $st -eq 1 ] && grep -q '^STILL  yes       yes       2/2' tri.out || fail "triage: exit $st, $(cat tri.out)"
	st=0
	"$ptfuzz" triage --variant default c >tri.out || st=$?
	[ $st -eq 0 ] && grep -q '^fixed' tri.out || fail "triage under the default: exit $st, $(cat tri.out)"
	st=0
	"$ptfuzz" campaign --status c >st.out || st=$?
	[ $st -eq 1 ] && grep -q 'finished campaign' st.out && grep -q ' 2 crashes ' st.out ||
		fail "--status: exit $st, $(cat st.out)"
	# --plot draws plot.svg again from plot_data: both curves and the axes
	rm c/plot.svg
	"$ptfuzz" campaign --plot c >/dev/null || fail "campaign --plot failed"
	[ "$(grep -c '<polyline' c/plot.svg)" -eq 2 ] && grep -q 'fuzzing time (s)' c/plot.svg ||
		fail "campaign --plot: $(head -c 300 c/plot.svg)"
	# a third run re-triages nothing: still one finding of two crashes
	"$ptfuzz" campaign --resume --fuzzer /bin/true --time 2s --out c >out 2>err
	grep -q '"count": 2' c/findings/index.json || fail "a resumed campaign counted the crashes again"
	;;
json_quiet)
	# --json: one document for campaign (its summary), --status, triage and triage --merge;
	# -q: no status or new-finding lines, a triage's verdict line only.  No engine (/bin/true).
	st=0
	"$ptfuzz" campaign -q --json --engine libfuzzer --fuzzer /bin/true --time 1s --variant $v -o c >out 2>err || st=$?
	[ $st -eq 0 ] || fail "campaign -q --json without crashes exited $st: $(cat err)"
	[ -s err ] && fail "campaign -q wrote to stderr: $(cat err)"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["findings"] == [] and d["state"] == "finished" and d["crashes"] == 0, d' out ||
		fail "campaign --json: $(cat out)"
	cp "$src/corpus/fuzz/ops_invariants/regressions-variants-$v.bin" c/crashes/crash-one
	st=0
	"$ptfuzz" campaign -q --json --resume --fuzzer /bin/true --time 1s -o c >out 2>err || st=$?
	[ $st -eq 1 ] || fail "campaign -q --json with a crash exited $st: $(cat err)"
	[ -s err ] && fail "campaign -q printed its new finding: $(cat err)"
	check_findings c 1
	sig=$(sed -n 's/.*"signature": "\([^"]*\)", "invariant".*/\1/p' c/findings/index.json)
	python3 - out c/findings/index.json "$v" <<'PY' || fail "campaign --json disagrees with index.json: $(cat out)"
import json, sys
d, idx = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
f = idx["findings"][0]
assert d["variant"] == sys.argv[3] and d["engine"] == "libfuzzer" and d["crashes"] == 1, d
assert [(x["signature"], x["crashes"], x["ops"], x["dir"]) for x in d["findings"]] == [(f["signature"], f["count"], f["ops"], f["dir"])], d
assert d["findings"][0]["invariant"] == f["invariant"] and d["findings"][0]["first_seen_utc"] == f["first_seen_utc"], d
PY
	st=0
	"$ptfuzz" campaign --status c --json >out || st=$?
	[ $st -eq 1 ] || fail "campaign --status --json exited $st"
	python3 - out "$sig" <<'PY' || fail "campaign --status --json: $(cat out)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["state"] == "finished" and d["pid"] is None and d["crashes"] == 1 and d["unreproduced"] == 0, d
assert set(d["this_run"]) == {"elapsed_s", "remaining_s", "execs", "execs_per_s", "corpus", "coverage"}, d
assert [x["signature"] for x in d["findings"]] == [sys.argv[2]], d
PY
	# the same campaign state, the same document
	"$ptfuzz" campaign --status c --json >out2 || true
	cmp -s out out2 || fail "campaign --status --json differs between two runs"
	st=0
	"$ptfuzz" triage --json c >out || st=$?
	[ $st -eq 1 ] || fail "triage --json exited $st"
	python3 - out "$sig" <<'PY' || fail "triage --json: $(cat out)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["crashes"] == 1 and d["still"] == 1 and d["new"] == [] and d["no_finding"] == 0, d
f = d["findings"][0]
assert (f["signature"], f["state"], f["crash_bin"], f["repro_ptt"], f["crashes_now"], f["crashes"]) == (sys.argv[2], "still", True, True, 1, 1), f
PY
	st=0
	"$ptfuzz" triage --json --variant default c >out || st=$?
	[ $st -eq 0 ] || fail "triage --json under the default exited $st"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); f = d["findings"][0]; assert d["variant"] == "default" and d["still"] == 0 and f["state"] == "fixed" and f["crash_bin"] is False and f["crashes_now"] == 0, d' out ||
		fail "triage --json --variant default: $(cat out)"
	st=0
	"$ptfuzz" triage -q c >out || st=$?
	[ $st -eq 1 ] && [ "$(cat out)" = "1 of 1 findings still reproduce" ] || fail "triage -q: exit $st, $(cat out)"
	st=0
	"$ptfuzz" triage --merge m --json c >out || st=$?
	[ $st -eq 1 ] || fail "triage --merge --json exited $st"
	python3 - out "$sig" "$v" <<'PY' || fail "triage --merge --json: $(cat out)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["out"] == "m" and d["campaigns"] == 1 and d["write_errors"] == 0, d
f = d["findings"][0]
assert f["signature"] == sys.argv[2] and f["repro_from"] == "c" and f["crashes"] == 1, f
assert f["found"] == [{"campaign": "c", "engine": "libfuzzer", "variant": sys.argv[3], "crashes": 1, "repro_replays": True}], f
PY
	"$ptfuzz" triage --merge m -q c >out || true
	[ "$(cat out)" = "merge m: 1 campaigns, 1 findings" ] || fail "triage --merge -q: $(cat out)"
	# a campaign directory's name is escaped in the merge's JSON files and document
	cp -R c 'q"\c'
	"$ptfuzz" triage --merge m2 --json 'q"\c' >out || true
	for f in out m2/*/found.json m2/*/report.json m2/index.json; do
		python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$f" || fail "$f is not JSON with a \" in the campaign's name"
	done
	grep -qF '"repro_from": "q\"\\c"' m2/*/found.json || fail "found.json: $(cat m2/*/found.json)"
	# without -q the new finding is said on stderr
	"$ptfuzz" campaign --engine libfuzzer --fuzzer /bin/true --time 1s --variant $v -o d >/dev/null 2>&1
	cp c/crashes/crash-one d/crashes/
	"$ptfuzz" campaign --resume --fuzzer /bin/true --time 1s -o d >out 2>err || true
	grep -q "^ptfuzz campaign: new finding $sig " err || fail "no new-finding line without -q: $(cat err)"
	;;
libfuzzer_finds)
	fz=$(libfuzzer_bin) || exit $?
	st=0
	"$ptfuzz" campaign --engine libfuzzer --fuzzer "$fz" --jobs 2 --time 20s --variant $v --out c >out 2>err || st=$?
	[ $st -eq 1 ] || fail "libFuzzer campaign exited $st (expected 1, findings): $(tail -3 err)"
	check_findings c 1
	ls c/findings/ | grep -q '^I3-' || fail "no I3 finding: $(ls c/findings)"
	grep -q '"state": "finished"' c/status.json || fail "status.json: $(cat c/status.json)"
	[ "$(grep -vc '^#' c/plot_data)" -ge 2 ] || fail "plot_data has fewer than two points"
	grep -q '<polyline' c/plot.svg || fail "no plot.svg"
	[ "$(ls c/corpus | wc -l)" -gt 0 ] || fail "empty corpus"
	grep -q "^1 .*I3 " out || fail "no summary table: $(cat out)"
	no_engines_left "$work/c"
	;;
afl_finds)
	need_afl
	st=0
	# the machine is shared: do not wait for free cores to bind
	AFL_NO_AFFINITY=1 "$ptfuzz" campaign --engine afl --jobs 2 --time 90s --until 1 --variant $v --out c >out 2>err || st=$?
	[ $st -eq 1 ] || fail "AFL++ campaign exited $st (expected 1, findings): $(tail -3 err)"
	check_findings c 1
	ls c/findings/ | grep -q '^I3-' || fail "no I3 finding: $(ls c/findings)"
	[ -d c/sync/main/queue ] && [ -d c/sync/s1/queue ] || fail "no -M main / -S s1 in c/sync"
	grep -q '"state": "finished"' c/status.json || fail "status.json: $(cat c/status.json)"
	no_engines_left "$work/c"
	;;
sigint_resume)
	fz=$(libfuzzer_bin) || exit $?
	"$ptfuzz" campaign --engine libfuzzer --fuzzer "$fz" --jobs 2 --time 120s --variant $v --out c >out 2>err &
	pid=$!
	wait_finding c 60 || { kill -INT $pid; wait $pid; fail "no finding within 60 s"; }
	# and a corpus: libFuzzer -fork merges new inputs into it as its jobs end
	i=0
	while [ $i -lt 300 ] && [ -z "$(ls c/corpus)" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -INT $pid
	st=0
	wait $pid || st=$?
	[ $st -eq 1 ] || fail "interrupted campaign exited $st: $(tail -3 err)"
	grep -q '"state": "interrupted"' c/status.json || fail "status.json: $(cat c/status.json)"
	grep -q "^1 .*I3 " out || fail "no summary after SIGINT: $(cat out)"
	no_engines_left "$work/c"
	check_findings c 1
	ncorpus=$(ls c/corpus | wc -l)
	[ "$ncorpus" -gt 0 ] || fail "empty corpus after SIGINT"
	ls c/findings/*/crash.bin >before
	cat $(cat before) | cksum >before.sum
	st=0
	"$ptfuzz" campaign --resume --fuzzer "$fz" --time 6s --out c >out 2>err || st=$?
	[ $st -eq 1 ] || fail "resumed campaign exited $st: $(tail -3 err)"
	ls c/findings/*/crash.bin >after
	cmp -s before after && cat $(cat after) | cksum | cmp -s - before.sum || fail "the resumed campaign changed the findings"
	[ "$(ls c/corpus | wc -l)" -ge "$ncorpus" ] || fail "the corpus shrank: $ncorpus -> $(ls c/corpus | wc -l)"
	grep -q '"state": "finished"' c/status.json || fail "status.json: $(cat c/status.json)"
	check_findings c 1
	;;
kill9)
	fz=$(libfuzzer_bin) || exit $?
	"$ptfuzz" campaign --engine libfuzzer --fuzzer "$fz" --jobs 2 --time 120s --variant $v --out c >out 2>err &
	pid=$!
	# kill it while a finding directory is being built if we can see one, else right after the first
	i=0
	while [ $i -lt 600 ]; do
		ls -d c/findings/.tmp-* >/dev/null 2>&1 && break
		ls -d c/findings/I*/ >/dev/null 2>&1 && break
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 $pid
	wait $pid 2>/dev/null
	# what is there is whole: no file but temporaries is partial
	for f in c/status.json c/campaign.json c/findings/index.json; do
		[ -f "$f" ] || continue
		python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$f" || fail "$f is not whole JSON after kill -9"
	done
	for f in c/findings/*/; do
		[ -d "$f" ] || continue
		for x in crash.bin repro.ptt report.txt report.json; do
			[ -s "$f$x" ] || fail "$f$x missing after kill -9"
		done
	done
	# the next start cleans the temporaries and stops the orphaned engines
	st=0
	"$ptfuzz" campaign --resume --fuzzer "$fz" --time 5s --out c >out2 2>err2 || st=$?
	[ $st -eq 1 ] || fail "the campaign after kill -9 exited $st: $(tail -3 err2)"
	check_findings c 1
	no_engines_left "$work/c"
	;;
merge)
	# ptfuzz triage --merge: campaigns a (lazy-mmu-no-flush-on-leave), b (set-ptes-no-barrier) and
	# a2 (a's variant again) each find I6/.../vmalloc, c (mremap-leaf-only-flush) finds I3: two
	# findings, the I6 one recording a, a2 and b with both variants
	sig6=I6/missed-barrier/kernel-map/return-before-barrier/vmalloc
	for x in a:lazy-mmu-no-flush-on-leave b:set-ptes-no-barrier a2:lazy-mmu-no-flush-on-leave c:$v; do
		d=${x%%:*} dv=${x#*:}
		"$ptfuzz" campaign --engine libfuzzer --fuzzer /bin/true --time 1s --variant "$dv" --out "$d" >/dev/null 2>&1
		cp "$src/corpus/fuzz/ops_invariants/regressions-variants-$dv.bin" "$d/crashes/crash-one"
		st=0
		"$ptfuzz" campaign --resume --fuzzer /bin/true --time 1s --out "$d" >out 2>err || st=$?
		[ $st -eq 1 ] || fail "campaign $d ($dv) found nothing: $(cat err)"
		v=$dv check_findings "$d" 1
	done
	grep -q "\"signature\": \"$sig6\"" a/findings/index.json b/findings/index.json ||
		fail "a and b do not share $sig6"
	st=0
	"$ptfuzz" triage --merge m a b a2 c >tri.out || st=$?
	[ $st -eq 1 ] || fail "triage --merge exited $st: $(cat tri.out)"
	[ "$(ls -d m/*/ | wc -l)" -eq 2 ] || fail "merge made $(ls -d m/*/ | wc -l) findings, expected 2: $(ls m)"
	f6=m/$(echo "$sig6" | tr / -)
	for x in crash.bin repro.ptt report.txt report.json found.json; do
		[ -s "$f6/$x" ] || fail "$f6/$x missing"
	done
	python3 - m/index.json "$f6/found.json" "$f6/report.json" "$sig6" <<'PY' || fail "merge index / found.json / report.json: $(cat m/index.json)"
import json, sys
idx, found, rep, sig = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), sys.argv[4]
assert idx["merged"] is True and len(idx["findings"]) == 2
e = [f for f in idx["findings"] if f["signature"] == sig][0]
assert e["variants"] == ["lazy-mmu-no-flush-on-leave", "set-ptes-no-barrier"] and e["campaigns"] == 3 and e["crashes"] == 3, e
assert [x["campaign"] for x in found["found"]] == ["a", "b", "a2"] and all(x["repro_replays"] for x in found["found"]), found
assert [x["variant"] for x in rep["found"]] == ["lazy-mmu-no-flush-on-leave", "set-ptes-no-barrier", "lazy-mmu-no-flush-on-leave"]
PY
	[ "$(grep -c '^found: ' "$f6/report.txt")" -eq 3 ] || fail "$f6/report.txt does not name the three campaigns"
	# the kept reproducer shows the signature under both variants
	for dv in lazy-mmu-no-flush-on-leave set-ptes-no-barrier; do
		st=0
		"$ptfuzz" replay --variant "$dv" "$f6/repro.ptt" >rep.out || st=$?
		[ $st -eq 1 ] && grep -q "signature: $sig6\$" rep.out || fail "$f6/repro.ptt does not show $sig6 under $dv"
	done
	grep -q '^2 .*I3 .* 1 .*mremap-leaf-only-flush(yes)' tri.out || fail "merge table: $(cat tri.out)"
	# again: the same directories, nothing left over
	cp -R m m.before
	"$ptfuzz" triage --merge m a b a2 c >/dev/null || true
	diff -r m m.before >/dev/null || fail "a second merge changed the merge"
	find m -name '.tmp-*' -o -name '.old-*' | grep -q . && fail "temporaries left in m"
	# bad: not a campaign; an OUT that holds something else
	one_line_2 triage --merge m2 a not-a-campaign
	mkdir other && echo x >other/file
	one_line_2 triage --merge other a
	one_line_2 triage --merge m --variant default a
	;;
multihost)
	# two hosts' campaigns on this machine: a (the -M main) and b (--host b, all -S); their
	# sync directories are exchanged as rsync would; b triages what a found
	need_afl
	export AFL_NO_AFFINITY=1
	st=0
	"$ptfuzz" campaign --engine afl --jobs 2 --time 90s --until 1 --variant $v --out a >out 2>err || st=$?
	[ $st -eq 1 ] || fail "host a found nothing (exit $st): $(tail -3 err)"
	ls a/sync/*/crashes/id:* >/dev/null 2>&1 || fail "no crash in a/sync/*/crashes"
	st=0
	"$ptfuzz" campaign --engine afl --jobs 1 --host b --time 2s --variant $v --out b >out 2>err || st=$?
	[ -d b/sync/b-s0/queue ] || fail "host b's instance is not b-s0: $(ls b/sync)"
	grep -q -- '-S b-s0' b/sync/b-s0/cmdline 2>/dev/null || grep -q 'b-s0' b/logs/afl-b-s0.log ||
		fail "host b did not run -S b-s0"
	# the exchange: each host's instances into the other's sync directory
	cp -R a/sync/main a/sync/s1 b/sync/
	cp -R b/sync/b-s0 a/sync/
	st=0
	"$ptfuzz" campaign --resume --time 6s --out b >out 2>err || st=$?
	[ $st -eq 1 ] || fail "host b did not triage host a's crash (exit $st): $(cat out) $(tail -3 err)"
	check_findings b 1
	ls b/findings/ | grep -q '^I3-' || fail "host b has no I3 finding: $(ls b/findings)"
	no_engines_left "$work/b"
	;;
multihost_sync)
	# the queues travel too: host a's main runs while its sync directory is copied into b's
	# (the rsync recipe, is_main_node included); b's instance, resumed, imports a's queue entries
	# (AFL_IMPORT_FIRST: queue/id:N,sync:main,src:M, .synced/main).  Six seeds, so that the
	# engines calibrate in a second or two even on a loaded machine.
	need_afl
	export AFL_NO_AFFINITY=1
	mkdir s
	for f in dontunmap errors shrink grow-in-place test-03-8k-pte-pte; do
		cp "$src/corpus/fuzz/ops_invariants/mm-mremap-$f.bin" s/
	done
	"$ptfuzz" campaign --engine afl --jobs 1 --seeds s --time 60s --variant $v --out a >a.out 2>a.err &
	apid=$!
	st=0
	"$ptfuzz" campaign --engine afl --jobs 1 --seeds s --host b --time 2s --variant $v --out b >out 2>err || st=$?
	[ -d b/sync/b-s0/queue ] || { kill -INT $apid; wait $apid; fail "host b did not run b-s0 (exit $st): $(tail -2 err)"; }
	# a's main is running (is_main_node) and has queue entries of its own beyond the seeds
	i=0
	while [ $i -lt 300 ]; do
		[ -e a/sync/main/is_main_node ] && [ "$(ls a/sync/main/queue | grep -vc ',orig:')" -ge 3 ] && break
		sleep 0.1
		i=$((i + 1))
	done
	[ $i -lt 300 ] || { kill -INT $apid; wait $apid; fail "host a's main made no queue entries in 30 s"; }
	cp -R a/sync/main b/sync/
	ls b/sync/b-s0/queue | grep -q ',sync:' && fail "b-s0 has sync: entries before the exchange"
	st=0
	"$ptfuzz" campaign --resume --time 10s --out b >out 2>err || st=$?
	kill -INT $apid
	wait $apid
	[ $st -le 1 ] || fail "host b's resumed campaign exited $st: $(tail -3 err)"
	n=$(ls b/sync/b-s0/queue | grep -c '^id:[0-9]*,sync:main,src:[0-9]*')
	[ "$n" -ge 1 ] || fail "b-s0 imported nothing from a's main: $(ls b/sync/b-s0/queue | tail -3)"
	[ -s b/sync/b-s0/.synced/main ] || fail "b-s0 has no .synced/main"
	imported=$(sed -n 's/^corpus_imported *: //p' b/sync/b-s0/fuzzer_stats)
	[ "${imported:-0}" -ge 1 ] || fail "fuzzer_stats: corpus_imported ${imported:-?}"
	echo "b-s0 imported $n of a's queue entries"
	no_engines_left "$work/a"
	no_engines_left "$work/b"
	;;
*)
	fail "unknown case"
	;;
esac
echo "ok $case"
