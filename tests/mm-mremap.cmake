# SPDX-License-Identifier: GPL-2.0-only
# mremap (engine/mm/mremap.c): which move path get_extent() gives for each test_case of
# mremap_test.c (corpus/mm/mremap-test), and seed 004 #11's 1 GiB cost claim (scaled here,
# full size in mm_mremap_1g: `ctest -L slow`).  The traces themselves also run as
# mm_corpus_mremap and mm_corpus_mremap-test.
add_executable(test_mm_mremap ${CMAKE_CURRENT_SOURCE_DIR}/test_mm_mremap.c)
target_link_libraries(test_mm_mremap PRIVATE ptreplay pttrace PkgConfig::CMOCKA)
add_test(NAME mm_mremap COMMAND test_mm_mremap ${PROJECT_SOURCE_DIR}/corpus/mm/mremap-test)
add_test(NAME mm_mremap_1g COMMAND test_mm_mremap --full ${PROJECT_SOURCE_DIR}/corpus/mm/mremap-test)
set_tests_properties(mm_mremap_1g PROPERTIES LABELS slow TIMEOUT 600)
