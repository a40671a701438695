# SPDX-License-Identifier: GPL-2.0-only
# Engine tests: the invariant corpus (each file says what it expects), determinism, unit tests.
add_executable(test_engine ${CMAKE_CURRENT_SOURCE_DIR}/test_engine.c)
target_link_libraries(test_engine PRIVATE ptreplay pttrace PkgConfig::CMOCKA)
add_test(NAME engine_invariant_corpus
         COMMAND test_engine ${PROJECT_SOURCE_DIR}/corpus/regressions/arch)
add_test(NAME variants_reproducers
         COMMAND test_engine ${PROJECT_SOURCE_DIR}/corpus/regressions/variants)
add_executable(test_hmap ${CMAKE_CURRENT_SOURCE_DIR}/test_hmap.c)
target_link_libraries(test_hmap PRIVATE ptmachine PkgConfig::CMOCKA)
add_test(NAME engine_hmap COMMAND test_hmap)

# every directory of ops-level traces under corpus/mm/ is a corpus test of its own
file(GLOB mm_corpus_dirs LIST_DIRECTORIES true ${PROJECT_SOURCE_DIR}/corpus/mm/*)
foreach(dir ${mm_corpus_dirs})
  if(IS_DIRECTORY ${dir})
    get_filename_component(name ${dir} NAME)
    add_test(NAME mm_corpus_${name} COMMAND test_engine ${dir})
  endif()
endforeach()
add_test(NAME engine_layering COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/layering.sh ${PROJECT_SOURCE_DIR})

# pt_session_reset(): every trace replays after a reset exactly as in a fresh session
add_executable(test_session_reset ${CMAKE_CURRENT_SOURCE_DIR}/test_session_reset.c)
target_link_libraries(test_session_reset PRIVATE ptreplay pttrace PkgConfig::CMOCKA)
add_test(NAME session_reset_is_fresh
         COMMAND test_session_reset ${PROJECT_SOURCE_DIR}/corpus ${PROJECT_SOURCE_DIR}/traces/examples)

# pt_dbg(): levels kept up to PTFUZZ_DEBUG, nothing in a default build.
add_executable(test_debug ${CMAKE_CURRENT_SOURCE_DIR}/test_debug.c ${CMAKE_CURRENT_SOURCE_DIR}/test_debug_off.c)
target_link_libraries(test_debug PRIVATE ptmachine PkgConfig::CMOCKA)
add_test(NAME engine_debug COMMAND test_debug)

# every checker rule (pt_checker_rules(), held against the source) fires on a bad trace of
# corpus/regressions/arch/ that has a clean twin; the rules no trace exercises are listed
add_executable(test_rule_coverage ${CMAKE_CURRENT_SOURCE_DIR}/test_rule_coverage.c)
target_link_libraries(test_rule_coverage PRIVATE ptreplay pttrace)
add_test(NAME rule_coverage COMMAND test_rule_coverage ${PROJECT_SOURCE_DIR})

# race reproducers robust to step counts: each `sched ... steps=N` swept over N-2..N+2, the
# variant fires at N-1, N and N+1 (N inside its window), the default model keeps its verdict for all
if(TARGET ptfuzz)
  add_test(NAME sched_step_sweep
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/sched_sweep.sh $<TARGET_FILE:ptfuzz> ${PROJECT_SOURCE_DIR})
endif()

# The shipped instruction-level captures (traces/examples/qemu-*.ptt.zst, README.md there) replay
# clean: the 48-bit ones and the 52-bit LPA2 one (5 levels from a 128-byte level -1 root)
if(TARGET ptfuzz)
  file(GLOB qemu_examples ${PROJECT_SOURCE_DIR}/traces/examples/qemu-*.ptt.zst)
  foreach(ex ${qemu_examples})
    get_filename_component(exname ${ex} NAME)
    string(REGEX REPLACE "\\.ptt\\.zst$" "" exname ${exname})
    add_test(NAME qemu.example.${exname} COMMAND $<TARGET_FILE:ptfuzz> replay --quiet ${ex})
    set_tests_properties(qemu.example.${exname} PROPERTIES TIMEOUT 300)
  endforeach()
endif()
