# SPDX-License-Identifier: GPL-2.0-only
# ptfuzz campaign / ptfuzz triage (tests/campaign.sh), one behaviour each, label
# `campaign`: ctest -L campaign.  The cases that fuzz for real need the
# fuzz-fast (or fuzz) and afl presets built (fuzzers/smoke.sh builds them) and
# are skipped without; each takes 10-45 s here (AFL++ waits up to 90 s for its
# first finding) and two cores.
set(PTFUZZ_CAMPAIGN_CASES bad_args dedup merge json_quiet libfuzzer_finds afl_finds sigint_resume kill9 multihost multihost_sync)
foreach(case IN LISTS PTFUZZ_CAMPAIGN_CASES)
  add_test(NAME campaign.${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/campaign.sh $<TARGET_FILE:ptfuzz> ${PROJECT_SOURCE_DIR}
            ${CMAKE_CURRENT_BINARY_DIR}/campaign/${case} ${case})
  set_tests_properties(campaign.${case} PROPERTIES LABELS campaign TIMEOUT 180 SKIP_RETURN_CODE 77)
endforeach()
# the fuzzing cases use both cores: never two at once
set_tests_properties(campaign.libfuzzer_finds campaign.afl_finds campaign.sigint_resume campaign.kill9
  campaign.multihost campaign.multihost_sync
  PROPERTIES RESOURCE_LOCK fuzz_cores)
# The ClusterFuzzLite / OSS-Fuzz build (.clusterfuzzlite/build.sh) with the
# OSS-Fuzz variables and clang-14, then each target on its seed corpus.
add_test(NAME cfl.build_and_run
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cfl.sh ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cfl)
set_tests_properties(cfl.build_and_run PROPERTIES LABELS "cfl" TIMEOUT 600 SKIP_RETURN_CODE 77 RESOURCE_LOCK fuzz_cores)
