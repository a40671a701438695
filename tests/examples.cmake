# SPDX-License-Identifier: GPL-2.0-only
# The shipped real-kernel traces (traces/examples/): each replays with 0
# violations under the default model and has its provenance
# (tests/examples/run.sh).  ctest -L examples
file(GLOB example_traces ${PROJECT_SOURCE_DIR}/traces/examples/*.ptt ${PROJECT_SOURCE_DIR}/traces/examples/*.ptt.zst)
foreach(ex ${example_traces})
  get_filename_component(exname ${ex} NAME)
  string(REGEX REPLACE "\\.ptt(\\.zst)?$" "" exname ${exname})
  add_test(NAME examples.${exname}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/examples/run.sh $<TARGET_FILE:ptfuzz> ${PROJECT_SOURCE_DIR}/traces/examples
            ${CMAKE_CURRENT_BINARY_DIR}/examples/${exname} ${ex})
  set_tests_properties(examples.${exname} PROPERTIES LABELS examples TIMEOUT 300)
endforeach()
# the recorded 7.2 kernel and the model make the same stores and TLBIs for the 13
# mremap_test.c configurations (tests/examples/mremap_cases.sh)
add_test(NAME examples.mremap_cases
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/examples/mremap_cases.sh $<TARGET_FILE:ptfuzz> ${PROJECT_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/examples/mremap_cases)
set_tests_properties(examples.mremap_cases PROPERTIES LABELS examples TIMEOUT 300)
# the vmalloc recording names its lazily freed vmap areas (the plugin's vmap_area events):
# clean with them, the lazy vfree()'s I2 without them (tests/examples/vmap_area.sh)
add_test(NAME examples.vmap_area
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/examples/vmap_area.sh $<TARGET_FILE:ptfuzz> ${PROJECT_SOURCE_DIR}/traces/examples
          ${CMAKE_CURRENT_BINARY_DIR}/examples/vmap_area)
set_tests_properties(examples.vmap_area PROPERTIES LABELS examples TIMEOUT 300)
