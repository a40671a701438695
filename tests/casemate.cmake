# SPDX-License-Identifier: GPL-2.0-only
# The Casemate importer (traces/import/casemate.c): parser and mapping tests, and the
# agreement table of Casemate's example logs replayed through a session
# (docs/casemate.md).  `build/.../test_casemate --table` prints the table.
if(NOT TARGET ptcasemate)
  include(${PROJECT_SOURCE_DIR}/traces/import/casemate.cmake)
endif()

# Casemate's expected example logs (examples/expected/*.log of
# rems-project/casemate 3.0.2, BSD-2-Clause; attribution in their README.md).
set(PTFUZZ_CASEMATE_EXAMPLES "${PROJECT_SOURCE_DIR}/tests/data/casemate-examples"
    CACHE PATH "directory of Casemate's example logs (good_*.log, bad_*.log)")
get_filename_component(casemate_examples "${PTFUZZ_CASEMATE_EXAMPLES}" ABSOLUTE)
if(NOT EXISTS "${casemate_examples}/good_bbm.log")
  message(WARNING "Casemate example logs not found in ${casemate_examples}: "
                  "test_casemate runs without the agreement table (set PTFUZZ_CASEMATE_EXAMPLES)")
  set(casemate_examples "")
endif()

add_executable(test_casemate test_casemate.c)
target_link_libraries(test_casemate PRIVATE ptcasemate ptreplay pttrace PkgConfig::CMOCKA)
target_compile_definitions(test_casemate PRIVATE CASEMATE_EXAMPLES="${casemate_examples}")
add_test(NAME casemate COMMAND test_casemate)
set_tests_properties(casemate PROPERTIES LABELS casemate TIMEOUT 120)
