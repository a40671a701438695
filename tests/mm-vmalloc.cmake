# SPDX-License-Identifier: GPL-2.0-only
# The vmalloc family of the mm model (vmalloc.c, hugetlb.c): arch-level shape of vmap/vunmap,
# the lazy purge, the hugetlb TLB hints, and seed 000's barrier costs under the baselines.
add_executable(test_mm_vmalloc ${CMAKE_CURRENT_SOURCE_DIR}/test_mm_vmalloc.c)
target_link_libraries(test_mm_vmalloc PRIVATE ptreplay ptmm pttrace PkgConfig::CMOCKA)
add_test(NAME mm_vmalloc COMMAND test_mm_vmalloc)
