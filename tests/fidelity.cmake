# SPDX-License-Identifier: GPL-2.0-only
# Replay against a captured kernel's evidence (divergences) and the kernel-version
# profiles: tests/fidelity/run.sh, one behaviour per case.  ctest -L fidelity
foreach(case agree one_changed channels touch_failed populated_nothing json_ops record profile profile_61_costs
    premapped shipped_61 shipped_72)
  add_test(NAME fidelity.${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/fidelity/run.sh $<TARGET_FILE:ptfuzz>
            ${CMAKE_CURRENT_SOURCE_DIR}/fidelity/data ${PROJECT_SOURCE_DIR}/traces/examples
            ${CMAKE_CURRENT_BINARY_DIR}/fidelity/${case} ${case})
  set_tests_properties(fidelity.${case} PROPERTIES LABELS "fidelity;cli" TIMEOUT 120)
endforeach()
