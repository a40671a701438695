#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bootstrap.sh - set up, build and check ptfuzz on a fresh Debian 12 machine.
#
#   tools/bootstrap.sh deps   install the build and test dependencies (apt)
#   tools/bootstrap.sh demo   deps, build the release preset, replay the shipped
#                             example traces and explain the verdict
#   tools/bootstrap.sh test   deps, then the `release` and `asan` workflow
#                             presets (configure, build, ctest; the second one
#                             runs every test under ASan+UBSan), then a fuzz
#                             smoke run (fuzzers/smoke.sh: libFuzzer and AFL++)
#
# Idempotent: a second run installs nothing and rebuilds only what changed.
set -euo pipefail

# Everything the project needs on Debian 12 (bookworm); toolchain notes are
# in the project's shared notes (toolchain.md).  libclang-rt-14-dev carries
# the sanitizer and libFuzzer runtimes, which --no-install-recommends would
# otherwise leave out.
PACKAGES=(build-essential cmake ninja-build pkg-config clang-14 libclang-rt-14-dev llvm-14
	  libprotobuf-c-dev protobuf-c-compiler libzstd-dev zstd libcmocka-dev afl++ python3)

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=$(nproc 2>/dev/null || echo 2)

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'bootstrap: error: %s\n' "$*" >&2; exit 2; }

usage() {
	cat <<EOF
usage: tools/bootstrap.sh {deps|demo|test}
  deps  install the Debian packages ptfuzz needs (apt-get; sudo when not root)
  demo  deps + release build + replay of the shipped example traces
  test  deps + 'cmake --workflow --preset release' + '... --preset asan'
EOF
	exit "${1:-2}"
}

installed() {
	[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

cmd_deps() {
	local missing=() p
	command -v dpkg-query >/dev/null || die "dpkg-query not found: this script expects Debian 12"
	for p in "${PACKAGES[@]}"; do
		installed "$p" || missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		say "dependencies: all ${#PACKAGES[@]} packages present"
		return 0
	fi
	local sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || die "not root and no sudo: install as root: apt-get install ${missing[*]}"
		sudo=(sudo)
	fi
	say "dependencies: installing ${missing[*]}"
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends "${missing[@]}"
	for p in "${missing[@]}"; do
		installed "$p" || die "package $p still not installed"
	done
	say "dependencies: done"
}

# The traces `demo` replays: the real kernel traces shipped in
# traces/examples/ (text .ptt and binary .ptt.zst; not the raw .ftrace they
# were imported from), then the clean examples of the corpus (*.good.ptt, or
# any trace whose `# expect:` line says clean).  The *.bad.ptt twins are meant
# to report a violation and are left to the test suite.
demo_traces() {
	local f expect
	shopt -s nullglob
	for f in "$ROOT"/traces/examples/*.ptt "$ROOT"/traces/examples/*.ptt.zst; do
		printf '%s\n' "$f"
	done
	for f in "$ROOT"/corpus/regressions/arch/*.ptt; do
		case "$(basename "$f")" in
		*.bad.*) continue ;;
		esac
		expect=$(grep -m1 -o '^# expect: *[a-zA-Z0-9/_-]*' "$f" 2>/dev/null || true)
		case $expect in
		'' | *clean) printf '%s\n' "$f" ;;
		esac
	done
	shopt -u nullglob
}

# The violations traces/examples/EXPECTED lists for a shipped trace ("N SIG..." sorted), or nothing.
expected_verdict() {
	local name
	name=$(basename "$1")
	[ "$(dirname "$1")" = "$ROOT/traces/examples" ] || return 0
	awk -v n="$name" '$1 == n { printf "%s\n", $2; fflush(); for (i = 3; i <= NF; i++) print $i | "sort"; close("sort"); exit }' \
		"$ROOT/traces/examples/EXPECTED" 2>/dev/null | paste -sd' ' -
}

# What a replay report shows, in that form: the number of violations and their signatures, sorted.
replay_verdict() {
	{ sed -n '1s/.*events, \([0-9]*\) violation.*/\1/p' "$1"; sed -n 's/^  signature: //p' "$1" | sort; } | paste -sd' ' -
}

# For each real-kernel trace shipped in traces/examples/: its ops, the verdict, the
# divergences from the kernel's evidence (traces/examples/FINDINGS.md explains them),
# the kernel profile the model ran as, and what it cost (page-table writes, TLBIs,
# DSBs: the trace's own and those the mm model made for its ops).
demo_table() {
	local ptfuzz=$1 f rows=()
	shopt -s nullglob
	for f in "$ROOT"/traces/examples/*.ptt "$ROOT"/traces/examples/*.ptt.zst; do
		rows+=("$f")
	done
	shopt -u nullglob
	[ ${#rows[@]} -gt 0 ] || return 0
	printf '\n==> the shipped real-kernel traces (traces/examples/)\n'
	for f in "${rows[@]}"; do
		"$ptfuzz" replay --json --quiet "$f" >"$ROOT/build/demo-replay.json" || true
		"$ptfuzz" stats --json "$f" >"$ROOT/build/demo-stats.json" || true
		# an instruction-level recording starts with a snapshot of the tables it found (its comment says how many)
		snap=$( { "$ptfuzz" convert "$f" - 2>/dev/null || true; } | sed -n '/^# snapshot ends (/{s/^# snapshot ends (\([0-9]*\) entries.*/\1/p;q;}')
		python3 - "${f#"$ROOT"/}" "$ROOT/build/demo-replay.json" "$ROOT/build/demo-stats.json" "${snap:-0}" <<'PY'
import json, sys
name, rj, sj, snap = sys.argv[1:5]
snap = int(snap)
try:
    r = json.load(open(rj))["files"][0]
    c = json.load(open(sj))["files"][0]["counters"]
except (OSError, ValueError, KeyError, IndexError):
    print("    %s: could not be replayed" % name)
    sys.exit(0)
nops = len(r["ops"])
ndiv = len(r["divergences"])
kinds = {}
for d in r["divergences"]:
    kinds[d["what"]] = kinds.get(d["what"], 0) + 1
sigs = {}
for v in r["violations"]:
    sigs[v["signature"]] = sigs.get(v["signature"], 0) + 1
print("    %s" % name)
ops = ("%d ops (ops level, run by the mm model)" % nops if nops else
       "%d operations (instruction level, begin/end)" % c["by_kind"].get("begin", 0))
print("      %s, %d violation%s, %s, kernel profile %s%s" % (
    ops, len(r["violations"]),
    "" if len(r["violations"]) == 1 else "s",
    ("%d divergence%s%s from %d kernel evidence events%s" % (ndiv, "" if ndiv == 1 else "s",
     " (%s)" % ", ".join("%s x%d" % kv for kv in sorted(kinds.items())) if ndiv else "", r["evidence"],
     " (traces/examples/FINDINGS.md)" if ndiv else "")) if r["evidence"] else "no kernel evidence",
    r["profile"], "" if r["populated"] else "; WARNING: nothing populated"))
for sig, n in sorted(sigs.items()):
    print("      violation: %s x%d (traces/examples/FINDINGS.md)" % (sig, n))
print("      %d events, %d page-table writes%s, %d TLBIs, %d DSBs, %d tables allocated" % (
    r["events"], c["pt_writes"], " (%d of them the start snapshot)" % snap if snap else "",
    sum(c["tlbi_by_op"].values()), sum(c["dsb_by_domain"].values()), c["tables_allocated"]))
PY
	done
	rm -f "$ROOT/build/demo-replay.json" "$ROOT/build/demo-stats.json"
}

cmd_demo() {
	cmd_deps
	cd "$ROOT"
	say "configure + build: release preset, the ptfuzz command (build/release)"
	cmake --preset release >/dev/null
	cmake --build --preset release -j "$JOBS" --target ptfuzz
	local ptfuzz=build/release/tools/ptfuzz
	[ -x "$ptfuzz" ] || die "$ptfuzz was not built"

	local traces=() f
	mapfile -t traces < <(demo_traces)
	[ ${#traces[@]} -gt 0 ] || die "no example traces under traces/examples/ or corpus/regressions/arch/"

	local worst=0 st clean=0 viol=0 bad=0 known=0 want out=$ROOT/build/demo-replay.txt
	for f in "${traces[@]}"; do
		printf '\n$ %s replay %s\n' "$ptfuzz" "${f#"$ROOT"/}"
		st=0
		"$ptfuzz" replay "$f" >"$out" || st=$?
		cat "$out"
		# a shipped trace whose violations traces/examples/EXPECTED lists (FINDINGS.md explains
		# them) is a known finding when it shows exactly those
		want=$(expected_verdict "$f")
		if [ $st = 1 ] && [ -n "$want" ] && [ "$want" = "$(replay_verdict "$out")" ]; then
			printf '    (a known finding: traces/examples/EXPECTED lists exactly these violations, FINDINGS.md explains them)\n'
			known=$((known + 1))
			continue
		fi
		case $st in
		0) clean=$((clean + 1)) ;;
		1) viol=$((viol + 1)) ;;
		*) bad=$((bad + 1)) ;;
		esac
		if [ $st -gt $worst ]; then worst=$st; fi
	done
	rm -f "$out"
	demo_table "$ptfuzz"
	cat <<EOF

==> demo: ${#traces[@]} trace(s) replayed: $clean clean, $known known finding(s), $viol with violations, $bad bad input/usage
    ptfuzz exit status: 0 = no violation, 1 = violation(s) found (report above),
    2 = bad input or usage (the message names file, byte offset or line).
    These example traces are clean, or show exactly the known findings of
    traces/examples/EXPECTED, so anything else is worth a bug report.
    Exiting with the worst status seen: $worst
EOF
	local bad_example
	bad_example=$(find corpus/regressions/arch -name '*.bad.ptt' 2>/dev/null | sort | head -n 1)
	if [ -n "$bad_example" ]; then
		printf '    To see a violation report: %s replay %s\n' "$ptfuzz" "$bad_example"
	fi
	exit "$worst"
}

# Run one workflow preset, keep its log, remember ctest's closing line.
run_workflow() {
	local preset=$1 log="$ROOT/build/bootstrap-$1.log" st=0 t0=$SECONDS
	mkdir -p "$ROOT/build"
	say "workflow preset '$preset': configure, build, test (log: ${log#"$ROOT"/})"
	cmake --workflow --preset "$preset" 2>&1 | tee "$log" || st=$?
	local line
	line=$(grep -E 'tests passed, [0-9]+ tests? failed out of' "$log" | tail -n 1 || true)
	[ -n "$line" ] || line="(no ctest summary: configure or build failed)"
	SUMMARY+=("$(printf '%-8s %-4s %s  [%ds]' "$preset" "$([ $st -eq 0 ] && echo ok || echo FAIL)" "$line" $((SECONDS - t0)))")
	return $st
}

cmd_test() {
	cmd_deps
	cd "$ROOT"
	# Both the build and ctest run on every core (the presets fix neither).
	export CMAKE_BUILD_PARALLEL_LEVEL=$JOBS CTEST_PARALLEL_LEVEL=$JOBS
	SUMMARY=()
	local failed=0
	run_workflow release || failed=1
	run_workflow asan || failed=1
	# seconds of real fuzzing: libFuzzer and AFL++ find an easy variant, the default stays silent
	local t0=$SECONDS st=0
	say "fuzz smoke: libFuzzer and AFL++ on the ops_invariants harness (fuzzers/smoke.sh)"
	fuzzers/smoke.sh 20 2>&1 | tee "$ROOT/build/bootstrap-smoke.log" || st=$?
	SUMMARY+=("$(printf '%-8s %-4s %s  [%ds]' smoke "$([ $st -eq 0 ] && echo ok || echo FAIL)" \
		"libFuzzer + AFL++ find mremap-leaf-only-flush; the default model silent over 1500 fixed-seed runs" $((SECONDS - t0)))")
	[ $st -eq 0 ] || failed=1
	# ptfuzz campaign with both engines, now that smoke.sh has built their harnesses
	# (the release workflow skips these cases when the harnesses are missing)
	t0=$SECONDS st=0
	say "campaigns: ctest -L campaign (libFuzzer and AFL++ campaigns, resume, kill -9, two hosts)"
	ctest --test-dir build/release -L campaign 2>&1 | tee "$ROOT/build/bootstrap-campaign.log" || st=$?
	SUMMARY+=("$(printf '%-8s %-4s %s  [%ds]' campaign "$([ $st -eq 0 ] && echo ok || echo FAIL)" \
		"ptfuzz campaign / triage with libFuzzer and AFL++" $((SECONDS - t0)))")
	[ $st -eq 0 ] || failed=1
	printf '\n==> test summary\n' >&2
	printf '    %s\n' "${SUMMARY[@]}" >&2
	if [ $failed -ne 0 ]; then
		printf 'bootstrap: FAILED (see the logs under build/)\n' >&2
		exit 1
	fi
	printf 'bootstrap: all tests passed (release and ASan+UBSan)\n' >&2
}

[ $# -eq 1 ] || usage >&2
case $1 in
deps) cmd_deps ;;
demo) cmd_demo ;;
test) cmd_test ;;
-h | --help | help) usage 0 ;;
*) usage >&2 ;;
esac
