# SPDX-License-Identifier: GPL-2.0-only
# cmake -DTRAINER=EXE -DSEEDS=DIR -DPROFILE=DIR -DSTAMP=FILE -P pgo-train.cmake
#
# PGO training (pgo.cmake): a fresh profile in PROFILE from the instrumented
# ops_invariants_regress over the seeds, then STAMP, which every object
# depends on.
file(REMOVE_RECURSE ${PROFILE})
# A finding is the fuzz target's business, not the build's: the counts are
# written at exit either way, so the exit status is not checked.  A trainer
# that crashes writes none; the build then goes on without a profile
# (-Wno-missing-profile), as it would with PTFUZZ_PGO=OFF, and says so.
execute_process(COMMAND ${TRAINER} ${SEEDS} OUTPUT_QUIET ERROR_QUIET RESULT_VARIABLE rc)
file(GLOB gcda ${PROFILE}/*.gcda)
if(NOT gcda)
  message(WARNING "PGO training (${TRAINER}: ${rc}) wrote no profile: built without one")
endif()
file(TOUCH ${STAMP})
