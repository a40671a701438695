# SPDX-License-Identifier: GPL-2.0-only
# Profile-guided optimisation (gcc): PTFUZZ_PGO=ON (the release preset).
#
# The build first builds an instrumented copy of this source tree in
# <build>/pgo-gen (-fprofile-generate), runs the training (pgo-train.cmake:
# ops_invariants_regress over the shipped seeds, corpus/fuzz/ops_invariants,
# the programs a fuzz campaign starts from), and then compiles every target of
# this build with -fprofile-use.  (Trained on the shipped traces as well,
# `ptfuzz replay` over corpus/mm and traces/, the bench's execs gained nothing.)  The profile changes code layout, inlining
# and branch order, never a result: optimisation keeps the C semantics, and
# bench/equiv.sh is identical to a build without it.
#
# .gcda names come from the objects' paths: -fprofile-prefix-path (GCC 11+)
# makes <build>/pgo-gen/X.o and <build>/X.o read and write the same
# <build>/pgo-profile/X.gcda.
#
# Incremental builds: a source edit rebuilds the instrumented copy, which
# relinks the trainer and retrains; every object of this build depends on
# <build>/pgo-profile.stamp, written by each training, so it is compiled after
# the training and again with each new profile: an edit of engine/ rebuilds
# all, and the binaries are those of a clean build.  The old profile is
# removed before each training, so counts never accumulate; the training is
# single-threaded (-fprofile-update=single) and its counts are the same on
# every run (a few value-profile counters hold address bits, which vary with
# ASLR; three trainings gave the same .text).
#   -Wno-missing-profile: the bench, tests and tools' own files are not run by
#   the training; they are compiled as without a profile.
#   -Wno-coverage-mismatch: sources generated in the build tree (protoc-c)
#   are at another path in the instrumented copy, which changes gcc's
#   checksum of their functions; their profile is dropped, not an error.

set(ptfuzz_pgo_dir ${CMAKE_BINARY_DIR}/pgo-profile)

if(PTFUZZ_PGO_GENERATE)
  # the instrumented copy (ExternalProject below): counters only
  add_compile_options(-fprofile-generate=${PTFUZZ_PGO_GENERATE}
    -fprofile-prefix-path=${CMAKE_BINARY_DIR} -fprofile-update=single)
  add_link_options(-fprofile-generate=${PTFUZZ_PGO_GENERATE})
  return()
endif()
if(NOT PTFUZZ_PGO)
  return()
endif()
if(NOT CMAKE_C_COMPILER_ID STREQUAL "GNU" OR CMAKE_C_COMPILER_VERSION VERSION_LESS 11)
  message(WARNING "PTFUZZ_PGO needs gcc 11 or later (-fprofile-prefix-path): built without a profile")
  set(PTFUZZ_PGO OFF)
  return()
endif()

include(ExternalProject)
set(ptfuzz_pgo_gen ${CMAKE_BINARY_DIR}/pgo-gen)
set(ptfuzz_pgo_trainer ${ptfuzz_pgo_gen}/fuzzers/ops_invariants_regress)
string(TOUPPER "${CMAKE_BUILD_TYPE}" ptfuzz_pgo_config)
ExternalProject_Add(pgo-gen
  SOURCE_DIR ${PROJECT_SOURCE_DIR}
  BINARY_DIR ${ptfuzz_pgo_gen}
  CMAKE_GENERATOR ${CMAKE_GENERATOR}
  # the same compiler and optimisation flags: gcc matches a profile to a
  # function by a checksum of its control flow as the instrumentation saw it
  CMAKE_CACHE_ARGS
    -DCMAKE_C_COMPILER:FILEPATH=${CMAKE_C_COMPILER}
    -DCMAKE_BUILD_TYPE:STRING=${CMAKE_BUILD_TYPE}
    -DCMAKE_C_FLAGS:STRING=${CMAKE_C_FLAGS}
    -DCMAKE_C_FLAGS_${ptfuzz_pgo_config}:STRING=${CMAKE_C_FLAGS_${ptfuzz_pgo_config}}
    -DCMAKE_INTERPROCEDURAL_OPTIMIZATION:BOOL=${CMAKE_INTERPROCEDURAL_OPTIMIZATION}
    -DPTFUZZ_DEBUG:STRING=${PTFUZZ_DEBUG}
    -DPTFUZZ_PGO:BOOL=OFF
    -DPTFUZZ_PGO_GENERATE:PATH=${ptfuzz_pgo_dir}
    -DPTFUZZ_TESTS:BOOL=OFF
    -DPTFUZZ_BENCH:BOOL=OFF
  BUILD_COMMAND ${CMAKE_COMMAND} --build ${ptfuzz_pgo_gen} --target ops_invariants_regress
  BUILD_ALWAYS ON
  BUILD_BYPRODUCTS ${ptfuzz_pgo_trainer}
  INSTALL_COMMAND ""
  EXCLUDE_FROM_ALL ON)

file(GLOB ptfuzz_pgo_seeds CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/corpus/fuzz/ops_invariants/*)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/pgo-profile.stamp
  COMMAND ${CMAKE_COMMAND} -DTRAINER=${ptfuzz_pgo_trainer}
    -DSEEDS=${PROJECT_SOURCE_DIR}/corpus/fuzz/ops_invariants
    -DPROFILE=${ptfuzz_pgo_dir} -DSTAMP=${CMAKE_BINARY_DIR}/pgo-profile.stamp
    -P ${CMAKE_CURRENT_LIST_DIR}/pgo-train.cmake
  DEPENDS pgo-gen ${ptfuzz_pgo_trainer} ${ptfuzz_pgo_seeds} ${CMAKE_CURRENT_LIST_DIR}/pgo-train.cmake
  COMMENT "PGO training: ops_invariants_regress over corpus/fuzz/ops_invariants"
  VERBATIM)
add_custom_target(pgo-train DEPENDS ${CMAKE_BINARY_DIR}/pgo-profile.stamp)

# -fprofile-partial-training: code the seeds never run (the trace readers,
# paths only other programs reach) keeps the optimisation it has without a
# profile instead of being optimised for size (bench-exec, 32 ops: 1.07x over
# -O3 + LTO with it, 1.055x without)
add_compile_options(-fprofile-use=${ptfuzz_pgo_dir} -fprofile-partial-training
  -fprofile-prefix-path=${CMAKE_BINARY_DIR} -Wno-missing-profile -Wno-coverage-mismatch)
add_link_options(-fprofile-use=${ptfuzz_pgo_dir} -fprofile-partial-training)

# -mstringop-strategy=libcall (x86): a block the training never ran is
# optimised for size even so, and there gcc expands every memset, memcpy and
# struct initialiser it does not do by moves as a `rep stos` / `rep movs`,
# whose start-up costs tens of cycles for the few dozen bytes these are (the
# pool reset, mm_table_alloc_install()'s events, table_new()); the bench's
# programs run many such blocks.  A call to the C library's routine is
# cheaper at every size (bench-exec: 1.03x at 32 ops, 1.04x at 8 ops; an
# unrolled loop 1.00 against the call, a vector loop 0.96-0.98).
include(CheckCCompilerFlag)
check_c_compiler_flag(-mstringop-strategy=libcall ptfuzz_has_stringop_strategy)
if(ptfuzz_has_stringop_strategy)
  add_compile_options(-mstringop-strategy=libcall)
endif()

# ptfuzz_pgo_depend(DIR): every object of every target under DIR depends on the
# profile's stamp (it is compiled after the training, and again when the
# profile changes).  Called once, after every add_subdirectory().
function(ptfuzz_pgo_depend dir)
  get_directory_property(targets DIRECTORY ${dir} BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "UTILITY" OR type STREQUAL "INTERFACE_LIBRARY")
      continue()
    endif()
    get_target_property(sources ${t} SOURCES)
    get_target_property(source_dir ${t} SOURCE_DIR)
    list(TRANSFORM sources PREPEND ${source_dir}/ REGEX "^[^/$]")
    set_property(SOURCE ${sources} TARGET_DIRECTORY ${t} APPEND PROPERTY
      OBJECT_DEPENDS ${CMAKE_BINARY_DIR}/pgo-profile.stamp)
  endforeach()
  get_directory_property(subdirs DIRECTORY ${dir} SUBDIRECTORIES)
  foreach(d ${subdirs})
    ptfuzz_pgo_depend(${d})
  endforeach()
endfunction()
