#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# tests/cfl.sh SRC WORKDIR - the ClusterFuzzLite / OSS-Fuzz build, without
# docker: .clusterfuzzlite/build.sh with the variables the OSS-Fuzz
# base-builder sets for an address build (SRC, WORK, OUT, CC, CXX, CFLAGS
# with -fsanitize=fuzzer-no-link, LIB_FUZZING_ENGINE=-fsanitize=fuzzer),
# then what helper.py check_build looks for: every target in $OUT with its
# seed corpus zip, dictionary and .options, and each target run on its
# unzipped seed corpus (fixed seed, a few hundred mutations) without a crash.
# Exit 77 (skipped) without clang-14 or zip.
set -u
src=$1 w=$2
fail() { echo "FAIL cfl: $*" >&2; exit 1; }
command -v clang-14 >/dev/null && command -v clang++-14 >/dev/null || { echo "SKIP: no clang-14" >&2; exit 77; }
command -v zip >/dev/null && command -v unzip >/dev/null || { echo "SKIP: no zip/unzip" >&2; exit 77; }
rm -rf "$w"
mkdir -p "$w/src" "$w/work" "$w/out"
# the Dockerfile's COPY . $SRC/ptfuzz (without the build trees, which may hold this very test)
mkdir "$w/src/ptfuzz"
(cd "$src" && tar --exclude=./build --exclude=./.git -cf - .) | tar -C "$w/src/ptfuzz" -xf - ||
	fail "cannot copy $src to $w/src/ptfuzz"
cp "$src/.clusterfuzzlite/build.sh" "$w/src/build.sh"
targets="ops_invariants trace_parse trace_roundtrip trace_replay"

# the build, as the base image's `compile` runs it: from $SRC/ptfuzz, $SRC/build.sh
(
	cd "$w/src/ptfuzz" &&
	env -u CMAKE_GENERATOR SRC="$w/src" WORK="$w/work" OUT="$w/out" CC=clang-14 CXX=clang++-14 \
		CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link" \
		CXXFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address -fsanitize=fuzzer-no-link" \
		LIB_FUZZING_ENGINE=-fsanitize=fuzzer SANITIZER=address FUZZING_ENGINE=libfuzzer ARCHITECTURE=x86_64 \
		bash -eu "$w/src/build.sh"
) >"$w/build.log" 2>&1 || fail "build.sh failed: $(tail -5 "$w/build.log")"

for t in $targets; do
	b=$w/out/$t
	[ -x "$b" ] || fail "no $b"
	# a libFuzzer target built with the sanitizer, as check_build checks
	nm "$b" | grep -q ' LLVMFuzzerTestOneInput$' || fail "$t has no LLVMFuzzerTestOneInput"
	nm "$b" | grep -q '__asan_init' || fail "$t is not built with ASan (\$CFLAGS not used)"
	nm "$b" | grep -q '__sanitizer_cov_trace_pc_guard\|__sanitizer_cov_8bit_counters_init' ||
		fail "$t has no coverage instrumentation"
	[ -s "$w/out/$t.dict" ] || fail "no $t.dict"
	grep -q '^\[libfuzzer\]$' "$w/out/$t.options" && grep -q "^dict = $t.dict\$" "$w/out/$t.options" ||
		fail "$t.options: $(cat "$w/out/$t.options")"
	z=$w/out/${t}_seed_corpus.zip
	[ -s "$z" ] || fail "no $z"
	mkdir -p "$w/seeds/$t"
	unzip -q "$z" -d "$w/seeds/$t" || fail "$z does not unzip"
	n=$(ls "$w/seeds/$t" | wc -l)
	[ "$n" -eq "$(ls "$src/corpus/fuzz/$t" | wc -l)" ] || fail "$z holds $n seeds, corpus/fuzz/$t $(ls "$src/corpus/fuzz/$t" | wc -l)"
	max_len=$(sed -n 's/^max_len = //p' "$w/out/$t.options")
	# the seeds, then 300 mutations from a fixed seed: the same inputs every run
	st=0
	(cd "$w/out" && ./"$t" -seed=1 -runs=300 -max_len="$max_len" -dict="$t.dict" -timeout=30 \
		-artifact_prefix="$w/crash-$t-" "$w/seeds/$t") >"$w/run-$t.log" 2>&1 || st=$?
	[ $st -eq 0 ] || fail "$t on its seed corpus exited $st: $(grep -m3 -e ERROR -e SUMMARY -e 'ptfuzz' "$w/run-$t.log")"
	grep -q "INITED.*corp: [1-9]" "$w/run-$t.log" || fail "$t did not load its seeds: $(grep -m2 INITED "$w/run-$t.log")"
	echo "ok $t: $n seeds, $(grep -o 'Done [0-9]* runs' "$w/run-$t.log")"
done
echo "ok cfl"
