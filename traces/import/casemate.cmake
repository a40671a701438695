# SPDX-License-Identifier: GPL-2.0-only
# traces/import/casemate.cmake: the Casemate log importer (ptcasemate), used by
# `ptfuzz import-casemate` and tests/test_casemate.c.  It knows the trace
# format, not the model: it links pttrace and ptevent only.
add_library(ptcasemate STATIC ${CMAKE_CURRENT_LIST_DIR}/casemate.c)
target_include_directories(ptcasemate PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(ptcasemate PUBLIC pttrace ptevent)
