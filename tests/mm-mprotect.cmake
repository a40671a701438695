# SPDX-License-Identifier: GPL-2.0-only
# mprotect and the NUMA scan (engine/mm/mprotect.c, seed 001) and linear-map creation
# (engine/arm64/mmu.c, seed 003): the cost claims measured against their baselines.
# The traces themselves run as mm_corpus_mprotect and mm_corpus_linear-map.
add_executable(test_mm_mprotect ${CMAKE_CURRENT_SOURCE_DIR}/test_mm_mprotect.c)
target_link_libraries(test_mm_mprotect PRIVATE ptreplay pttrace PkgConfig::CMOCKA)
add_test(NAME mm_mprotect COMMAND test_mm_mprotect)
