# SPDX-License-Identifier: GPL-2.0-only
# Tests of the trace format (traces/): cmocka unit tests and the fuzz
# targets' regression runs over the corpora.  Included by tests/CMakeLists.txt.

set(PTFUZZ_TRACE_DATA ${PROJECT_SOURCE_DIR}/tests/data)

function(ptfuzz_trace_test name)
  add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/${name}.c)
  target_link_libraries(${name} PRIVATE pttrace PkgConfig::CMOCKA ${ARGN})
endfunction()

ptfuzz_trace_test(test_trace_errors PkgConfig::ZSTD)
add_test(NAME trace_errors COMMAND test_trace_errors ${PTFUZZ_TRACE_DATA}/malformed)

# the .proto and event.c agree (reads protoc-c's generated descriptors)
ptfuzz_trace_test(test_trace_proto PkgConfig::PROTOBUFC)
target_include_directories(test_trace_proto PRIVATE $<TARGET_PROPERTY:pttrace,BINARY_DIR>)
add_dependencies(test_trace_proto pttrace)
add_test(NAME trace_proto COMMAND test_trace_proto)

ptfuzz_trace_test(test_trace_text)
add_test(NAME trace_text COMMAND test_trace_text)

ptfuzz_trace_test(test_trace_desc)
add_test(NAME trace_desc COMMAND test_trace_desc)

ptfuzz_trace_test(test_trace_writer)
add_test(NAME trace_writer COMMAND test_trace_writer)

# round trip of every *.ptt / *.ptt.zst under corpus/, the shipped real
# traces and the samples, globbed at run time
ptfuzz_trace_test(test_trace_roundtrip)
add_test(NAME trace_roundtrip
         COMMAND test_trace_roundtrip --samples ${PTFUZZ_TRACE_DATA}/traces ${PROJECT_SOURCE_DIR}/corpus
                 ${PROJECT_SOURCE_DIR}/traces/examples)

ptfuzz_trace_test(test_trace_stream)
add_test(NAME trace_stream COMMAND test_trace_stream)

# The fuzz targets as plain binaries over their corpora, the regressions
# and the malformed inputs.
foreach(t trace_parse trace_roundtrip)
  add_test(NAME ${t}_regress
           COMMAND ${t}_regress ${PROJECT_SOURCE_DIR}/corpus/fuzz/${t} ${PROJECT_SOURCE_DIR}/corpus/regressions
                   ${PTFUZZ_TRACE_DATA}/malformed ${PTFUZZ_TRACE_DATA}/traces)
endforeach()

# The whole replay (reader, machine, mm model, checkers) over every shipped trace and the
# replay fuzzer's own finds: any accepted trace ends in a verdict, the same twice.
add_test(NAME trace_replay_regress
         COMMAND trace_replay_regress ${PROJECT_SOURCE_DIR}/corpus/fuzz/trace_replay
                 ${PROJECT_SOURCE_DIR}/corpus/regressions ${PROJECT_SOURCE_DIR}/corpus/mm
                 ${PROJECT_SOURCE_DIR}/corpus/fuzz/trace_parse ${PTFUZZ_TRACE_DATA}/malformed)

# bounded zstd frames, verified before use: damage anywhere costs its frame, never a wrong event
ptfuzz_trace_test(test_trace_frames PkgConfig::ZSTD)
add_test(NAME trace_frames COMMAND test_trace_frames)
