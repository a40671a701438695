# SPDX-License-Identifier: GPL-2.0-only
# traces/import/ftrace.cmake: the ftrace text importer (ptftrace), used by
# `ptfuzz import-ftrace` and tests/test_ftrace.c.  It knows the trace
# format, not the model: it links pttrace and ptevent only.
add_library(ptftrace STATIC ${CMAKE_CURRENT_LIST_DIR}/ftrace.c)
target_include_directories(ptftrace PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(ptftrace PUBLIC pttrace ptevent)
