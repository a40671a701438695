# SPDX-License-Identifier: GPL-2.0-only
# End-to-end tests of the ptfuzz command (tests/cli/run.sh), one behaviour each:
#   ctest -R cli.   ;   by hand: sh tests/cli/run.sh PTFUZZ tests/cli/data WORKDIR CASE
set(PTFUZZ_CLI_CASES
  help
  version
  usage_errors
  replay_clean
  replay_violation
  replay_json
  replay_stdin
  replay_missing_file
  replay_truncated_binary
  replay_garbage_tail
  replay_damaged_frames
  replay_bad_text_line
  replay_bad_reference
  replay_deterministic
  replay_names_variant
  replay_sigpipe
  replay_record
  replay_huge_sizes
  replay_over_budget
  variants
  convert_roundtrip_text
  convert_roundtrip_binary
  convert_keeps_output_on_error
  convert_to_fifo
  convert_existing_output
  interrupted_write_leaves_nothing
  convert_output_option
  import_existing_output
  output_conventions
  stats
  stats_quiet
  minimize_json
  import_json
  json_everywhere)
if(TARGET ptcasemate)
  list(APPEND PTFUZZ_CLI_CASES import_casemate)
endif()

foreach(case IN LISTS PTFUZZ_CLI_CASES)
  add_test(NAME cli.${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/run.sh $<TARGET_FILE:ptfuzz>
            ${CMAKE_CURRENT_SOURCE_DIR}/cli/data ${CMAKE_CURRENT_BINARY_DIR}/cli/${case} ${case})
  set_tests_properties(cli.${case} PROPERTIES LABELS cli TIMEOUT 120)
endforeach()

# cmake --install: the command, ptfuzz(1) generated from --help, the dictionaries.
add_test(NAME cli.install
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install.sh ${CMAKE_BINARY_DIR} $<TARGET_FILE:ptfuzz>
          ${CMAKE_CURRENT_BINARY_DIR}/cli/install)
set_tests_properties(cli.install PROPERTIES LABELS cli TIMEOUT 120)

# these fill the mm model's capacity or its trace budget on purpose: a few seconds of CPU in
# the release build, tens under ASan
set_tests_properties(cli.replay_huge_sizes cli.replay_over_budget PROPERTIES TIMEOUT 900)
