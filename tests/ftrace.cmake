# SPDX-License-Identifier: GPL-2.0-only
# The ftrace importer (traces/import/ftrace.c): both input forms, the mapping onto
# ops events, malformed input, and a clean replay of an imported trace.
if(NOT TARGET ptftrace)
  include(${PROJECT_SOURCE_DIR}/traces/import/ftrace.cmake)
endif()
add_executable(test_ftrace test_ftrace.c)
target_link_libraries(test_ftrace PRIVATE ptftrace ptreplay pttrace PkgConfig::CMOCKA)
target_compile_definitions(test_ftrace PRIVATE FTRACE_EXAMPLES="${PROJECT_SOURCE_DIR}/traces/examples"
                                               CAPTURE_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data/capture")
add_test(NAME ftrace COMMAND test_ftrace)
set_tests_properties(ftrace PROPERTIES LABELS ftrace TIMEOUT 120)

# The shipped ftrace captures replay clean (traces/examples/README-ftrace.md).
file(GLOB ftrace_examples ${PROJECT_SOURCE_DIR}/traces/examples/ftrace-*.ptt)
foreach(ex ${ftrace_examples})
  get_filename_component(exname ${ex} NAME_WLE)
  add_test(NAME ftrace.example.${exname} COMMAND $<TARGET_FILE:ptfuzz> replay --quiet ${ex})
  set_tests_properties(ftrace.example.${exname} PROPERTIES LABELS ftrace TIMEOUT 300)
endforeach()

# traces/capture/capture.sh against fake tracefs trees (tests/capture/test_capture.sh)
foreach(case usage capture_and_import default_output no_tracefs no_syscall_events no_kprobes failed_write btf btf_dump
    record_scripts_usage apt_install check)
  add_test(NAME capture.${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/capture/test_capture.sh $<TARGET_FILE:ptfuzz> ${PROJECT_SOURCE_DIR}
            ${CMAKE_CURRENT_BINARY_DIR}/capture/${case} ${case})
  set_tests_properties(capture.${case} PROPERTIES LABELS "capture;ftrace" TIMEOUT 120)
endforeach()
# the same under the other shells it must run in: bash, and busybox sh (the QEMU guest's)
find_program(PTFUZZ_BASH bash)
find_program(PTFUZZ_BUSYBOX busybox)
foreach(shell bash busybox)
  if(shell STREQUAL bash)
    set(sh_cmd "${PTFUZZ_BASH}")
  else()
    set(sh_cmd "${PTFUZZ_BUSYBOX} sh")
  endif()
  if((shell STREQUAL bash AND PTFUZZ_BASH) OR (shell STREQUAL busybox AND PTFUZZ_BUSYBOX))
    foreach(case capture_and_import failed_write btf check)
      add_test(NAME capture.${shell}.${case}
        COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/capture/test_capture.sh $<TARGET_FILE:ptfuzz> ${PROJECT_SOURCE_DIR}
                ${CMAKE_CURRENT_BINARY_DIR}/capture/${shell}.${case} ${case})
      set_tests_properties(capture.${shell}.${case} PROPERTIES LABELS "capture;ftrace" TIMEOUT 120
                           ENVIRONMENT "CAPTURE_SH=${sh_cmd}")
    endforeach()
  endif()
endforeach()
