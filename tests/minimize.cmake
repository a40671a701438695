# SPDX-License-Identifier: GPL-2.0-only
# `ptfuzz minimize` end to end (tests/minimize/run.sh), one behaviour each:
#   ctest -R minimize.   ;   by hand: sh tests/minimize/run.sh PTFUZZ TEST_ENGINE SRC WORKDIR CASE
# Each variant case buries that variant's reproducer (corpus/regressions/variants/) among
# irrelevant ops (on CPUs of their own; with @CPU, on that CPU of the reproducer and in its
# address space) and checks that the minimized trace is 1-minimal and keeps the signature.
set(PTFUZZ_MINIMIZE_CASES
  variant_mremap-leaf-only-flush
  variant_mremap-pmd-no-rmap-lock
  variant_set-ptes-no-barrier
  variant_mprotect-batch-overrun
  variant_pgtable-no-zero-dsb
  variant_lazy-mmu-irq
  variant_switch-to-no-dsb
  variant_mremap-leaf-only-flush@0
  variant_mprotect-batch-overrun@1
  arch_trace
  binary_stdin
  fuzz_input
  same_invariant
  replay_cap
  usage_errors)

foreach(case IN LISTS PTFUZZ_MINIMIZE_CASES)
  add_test(NAME minimize.${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/minimize/run.sh $<TARGET_FILE:ptfuzz> $<TARGET_FILE:test_engine>
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/minimize/${case} ${case})
  set_tests_properties(minimize.${case} PROPERTIES LABELS minimize TIMEOUT 300)
endforeach()
