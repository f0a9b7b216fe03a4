# libFuzzer targets.  The fuzzer can only steer by the coverage of code built
# with -fsanitize=fuzzer-no-link, so the library sources the harness reaches
# are compiled a second time with that instrumentation (and the sanitizers of
# RESMON_SANITIZE, which apply to every target), separately from the normal
# libraries.  Jansson, which does the parsing, comes from the system
# uninstrumented, so its internals stay invisible to the fuzzer -- unless
# RESMON_FUZZ_JANSSON_SOURCE_DIR names a Jansson source tree (Debian has no
# deb-src configured offline; a release tarball or git checkout of the
# installed version will do), which is then built instrumented and linked
# instead (see BENCHMARKS.md, "Fuzzing").
set(RESMON_FUZZ_JANSSON_SOURCE_DIR "" CACHE PATH
    "A Jansson source tree to build instrumented into the fuzzer (empty: the system's Jansson)")
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "resmon: RESMON_BUILD_FUZZERS needs clang (libFuzzer), not ${CMAKE_C_COMPILER_ID}")
endif()

# Every library source, so the copy cannot fall behind what summary_json.c
# comes to call; being a static library, only the objects the harness reaches
# are linked, and only edges it runs count as coverage.
add_library(resmon_fuzz_instrumented STATIC ${RESMON_SOURCES})
resmon_library_sources_setup(resmon_fuzz_instrumented)
target_compile_definitions(resmon_fuzz_instrumented PUBLIC RESMON_STATIC_DEFINE)
target_compile_options(resmon_fuzz_instrumented PRIVATE -fsanitize=fuzzer-no-link)
if(RESMON_FUZZ_JANSSON_SOURCE_DIR)
  set(JANSSON_BUILD_DOCS OFF CACHE BOOL "" FORCE)
  set(JANSSON_EXAMPLES OFF CACHE BOOL "" FORCE)
  set(JANSSON_WITHOUT_TESTS ON CACHE BOOL "" FORCE)
  set(JANSSON_INSTALL OFF CACHE BOOL "" FORCE)
  set(CMAKE_POLICY_DEFAULT_CMP0063 NEW) # Jansson 2.14 asks for CMake 3.1 policies
  add_subdirectory(${RESMON_FUZZ_JANSSON_SOURCE_DIR} jansson EXCLUDE_FROM_ALL)
  target_compile_options(jansson PRIVATE -fsanitize=fuzzer-no-link)
  set(_resmon_fuzz_jansson jansson)
else()
  set(_resmon_fuzz_jansson PkgConfig::resmon_jansson)
endif()
target_link_libraries(resmon_fuzz_instrumented PRIVATE ${_resmon_fuzz_jansson})

add_executable(fuzz_summary_json fuzz/fuzz_summary_json.c)
target_compile_options(fuzz_summary_json PRIVATE -fsanitize=fuzzer)
target_link_options(fuzz_summary_json PRIVATE -fsanitize=fuzzer)
target_link_libraries(fuzz_summary_json PRIVATE resmon_fuzz_instrumented)
resmon_target_warnings(fuzz_summary_json)
