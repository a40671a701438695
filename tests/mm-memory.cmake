# SPDX-License-Identifier: GPL-2.0-only
# The user-mapping teardown family of the mm model (memory.c, rmap.c, contpte.c):
# arch-level shape of munmap / split / unfold / pageout, and the bad sequences the
# checkers must catch.
add_executable(test_mm_memory ${CMAKE_CURRENT_SOURCE_DIR}/test_mm_memory.c)
target_link_libraries(test_mm_memory PRIVATE ptreplay ptmm pttrace PkgConfig::CMOCKA)
add_test(NAME mm_memory COMMAND test_mm_memory)
