# SPDX-License-Identifier: GPL-2.0-only
# The ops-level fuzz input, its mutators and the ops_invariants harness.
add_executable(test_program ${CMAKE_CURRENT_SOURCE_DIR}/test_program.c
  ${PROJECT_SOURCE_DIR}/fuzzers/ops_mutator.c ${PROJECT_SOURCE_DIR}/fuzzers/afl_mutator.c)
target_link_libraries(test_program PRIVATE ptprogram pttrace PkgConfig::CMOCKA)
add_test(NAME fuzz_program
         COMMAND test_program ${PROJECT_SOURCE_DIR}/corpus/mm ${PROJECT_SOURCE_DIR}/corpus/regressions/variants)

# the default model is silent on every seed, the same twice (the regress driver checks both)
add_test(NAME ops_invariants_regress
         COMMAND ops_invariants_regress ${PROJECT_SOURCE_DIR}/corpus/fuzz/ops_invariants)
# every variant reproducer, as a fuzz input, is a finding of its variant (differential
# against the default) with an invariant the variant is caught by; its seed is up to date
add_test(NAME ops_invariants_variants
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_variants.sh $<TARGET_FILE:ops_invariants_regress>
                 $<TARGET_FILE:ptfuzz> ${PROJECT_SOURCE_DIR})
# the grammar reaches the windows of lazy-mmu-irq and hugetlb-user-flush-for-kernel with
# a few biased records (an IRQ / a kernel access that first stops the CPU's thread mid-op)
add_test(NAME ops_invariants_reach
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_reach.sh $<TARGET_FILE:ops_invariants_regress>
                 ${CMAKE_CURRENT_SOURCE_DIR}/data/fuzz-reach)
# the known findings (fuzzers/known-findings.txt): the documented kernel question's seed is
# printed and passed over by default, and a finding again with PTFUZZ_KNOWN=off
set(known_seed ${PROJECT_SOURCE_DIR}/corpus/fuzz/ops_invariants/mm-regressions-mprotect-refolds-unfolded-block.bad.bin)
add_test(NAME ops_invariants_known_finding_printed COMMAND ops_invariants_regress ${known_seed})
set_tests_properties(ops_invariants_known_finding_printed PROPERTIES
  PASS_REGULAR_EXPRESSION "ptfuzz known finding: I4 I4/bbm/break-not-visible/change_pte_range refold")
add_test(NAME ops_invariants_known_finding_off
         COMMAND sh -c "PTFUZZ_KNOWN=off \"$0\" \"$1\" 2>&1; echo exit=$?"
                 $<TARGET_FILE:ops_invariants_regress> ${known_seed})
set_tests_properties(ops_invariants_known_finding_off PROPERTIES
  PASS_REGULAR_EXPRESSION "ptfuzz finding: I4 I4/bbm/break-not-visible/change_pte_range.*exit=134")
# known findings are shell patterns: the refold named after whichever routine made it visible
add_test(NAME ops_invariants_known_pattern
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_known.sh $<TARGET_FILE:ops_invariants_regress>
                 ${PROJECT_SOURCE_DIR}/corpus/fuzz/ops_invariants/mm-regressions-fuzz-refold-visible-at-next-fold.bad.bin)
