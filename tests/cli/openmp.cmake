# `cilkprof run --openmp` (cli/src/openmp_runtime.h, docs/OPENMP.md "Running g++ -fopenmp
# programs"), on a program built with the project's GNU compiler and -fopenmp, which
# links libgomp.so.1 (clang's -fopenmp would link libomp: nothing to test then).
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR NOT TARGET cilkprof_cli)
  return()
endif()
add_executable(cli_gomp_program gomp_program.cc)
target_compile_options(cli_gomp_program PRIVATE -fopenmp -O1 -g)
target_link_options(cli_gomp_program PRIVATE -fopenmp)
set_target_properties(cli_gomp_program PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

add_executable(cli_openmp_runtime_test run_tool.cc openmp_runtime_test.cc)
target_link_libraries(cli_openmp_runtime_test PRIVATE cilkprof_cli GTest::gtest_main)
target_compile_definitions(cli_openmp_runtime_test PRIVATE
  CILKPROF_TEST_GOMP_PROGRAM="$<TARGET_FILE:cli_gomp_program>")
add_dependencies(cli_openmp_runtime_test cli_gomp_program)
cilkprof_sanitize(cli_openmp_runtime_test)
gtest_discover_tests(cli_openmp_runtime_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)

# With the real agent and libomp: the warning, and the program really on libomp.
if(TARGET cilkprof_agent AND CILKPROF_OPENMP_FOUND)
  add_executable(cli_openmp_run_e2e_test run_tool.cc openmp_run_e2e_test.cc)
  target_link_libraries(cli_openmp_run_e2e_test PRIVATE GTest::gtest_main)
  target_compile_definitions(cli_openmp_run_e2e_test PRIVATE
    CILKPROF_TEST_CILKPROF="$<TARGET_FILE:cilkprof>"
    CILKPROF_TEST_CILKPROF_RUN="$<TARGET_FILE:cilkprof-run>"
    CILKPROF_TEST_AGENT="$<TARGET_FILE:cilkprof_agent>"
    CILKPROF_TEST_GOMP_PROGRAM="$<TARGET_FILE:cli_gomp_program>")
  add_dependencies(cli_openmp_run_e2e_test cilkprof cilkprof-run cilkprof_agent cli_gomp_program)
  gtest_discover_tests(cli_openmp_run_e2e_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS e2e TIMEOUT 120)
endif()
