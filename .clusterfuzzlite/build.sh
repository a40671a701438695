#!/bin/bash -eu
# SPDX-License-Identifier: GPL-2.0-only
#
# .clusterfuzzlite/build.sh - build every fuzz target of ptfuzz the OSS-Fuzz
# way: the libraries and targets with $CC and $CFLAGS, each target linked
# with $CXX and $LIB_FUZZING_ENGINE into $OUT/<target>, next to
#   <target>_seed_corpus.zip   corpus/fuzz/<target>/ (the shipped seeds)
#   <target>.dict              fuzzers/ops.dict or fuzzers/trace.dict
#   <target>.options           [libfuzzer] max_len, dict, timeout
# Targets: ops_invariants (mm op programs against every invariant; the
# structure-aware mutator built in), trace_parse, trace_roundtrip,
# trace_replay.  Intermediate files go to $WORK/build.
#
# In the ClusterFuzzLite image it runs from $SRC/ptfuzz (Dockerfile); here
# too with the same variables: tests/cfl.sh (ctest -L cfl) runs it with
# SRC WORK OUT CC=clang-14 CXX=clang++-14 CFLAGS=...-fsanitize=fuzzer-no-link
# LIB_FUZZING_ENGINE=-fsanitize=fuzzer, then each target on its seeds.
src=${PTFUZZ_SRC:-$SRC/ptfuzz}
build=$WORK/build
targets="ops_invariants trace_parse trace_roundtrip trace_replay"

# CMake reads $CC and $CFLAGS itself; no build type, so that $CFLAGS alone
# sets the optimisation.  The fuzz targets are C: link them with $CXX as
# OSS-Fuzz asks (its libFuzzer and sanitizer runtimes want the C++ library).
cmake -S "$src" -B "$build" ${CMAKE_GENERATOR:+-G "$CMAKE_GENERATOR"} \
	-DCMAKE_BUILD_TYPE= \
	-DCMAKE_C_LINK_EXECUTABLE="${CXX:-$CC} <FLAGS> <CMAKE_C_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>" \
	-DPTFUZZ_FUZZERS=ON -DPTFUZZ_TESTS=OFF -DPTFUZZ_BENCH=OFF \
	-DPTFUZZ_FUZZING_ENGINE="$LIB_FUZZING_ENGINE"
cmake --build "$build" -j "$(nproc)" --target $(for t in $targets; do printf '%s_fuzz ' "$t"; done)

mkdir -p "$OUT"
for t in $targets; do
	cp "$build/fuzzers/${t}_fuzz" "$OUT/$t"
	case $t in
	ops_invariants) dict=ops.dict max_len=1024 ;;
	*) dict=trace.dict max_len=65536 ;;
	esac
	cp "$src/fuzzers/$dict" "$OUT/$t.dict"
	printf '[libfuzzer]\nmax_len = %s\ndict = %s.dict\ntimeout = 30\n' "$max_len" "$t" >"$OUT/$t.options"
	rm -f "$OUT/${t}_seed_corpus.zip"
	(cd "$src/corpus/fuzz/$t" && zip -q -j -X "$OUT/${t}_seed_corpus.zip" -- *)
done
