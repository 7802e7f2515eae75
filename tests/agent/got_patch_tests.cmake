# The GOT rewriting of an injected agent (issue 15; agent/src/got_patch.h,
# agent/src/control/injected_interposition.h), included by tests/agent/CMakeLists.txt.

# A library defining the redirected functions, and two callers of them: one through a
# lazily bound PLT, one with -fno-plt and -z now (its slots in the read-only RELRO).
add_library(cilkprof_got_test_target SHARED got_test_target.c)
add_library(cilkprof_got_test_plt SHARED got_test_caller.c)
target_compile_definitions(cilkprof_got_test_plt PRIVATE CALLER_NAME=got_test_plt)
target_link_options(cilkprof_got_test_plt PRIVATE -Wl,-z,lazy -Wl,-z,relro)
add_library(cilkprof_got_test_noplt SHARED got_test_caller.c)
target_compile_definitions(cilkprof_got_test_noplt PRIVATE CALLER_NAME=got_test_noplt)
target_compile_options(cilkprof_got_test_noplt PRIVATE -fno-plt)
target_link_options(cilkprof_got_test_noplt PRIVATE -Wl,-z,now -Wl,-z,relro)
foreach(lib cilkprof_got_test_plt cilkprof_got_test_noplt)
  target_link_libraries(${lib} PRIVATE cilkprof_got_test_target)
endforeach()
set_target_properties(cilkprof_got_test_target cilkprof_got_test_plt cilkprof_got_test_noplt PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

# Not sanitized: the sanitizers' own interposition would stand between the test and
# the slots it inspects.
add_executable(agent_got_patch_test got_patch_test.cc)
target_link_libraries(agent_got_patch_test PRIVATE cilkprof::agent_core GTest::gtest_main
                      cilkprof_got_test_plt cilkprof_got_test_noplt cilkprof_got_test_target)
target_link_options(agent_got_patch_test PRIVATE -Wl,-z,lazy)
gtest_discover_tests(agent_got_patch_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)

# The injected agent's interposers reach libc (RTLD_NEXT from a dlopen()ed agent).
if(TARGET cilkprof_agent)
  add_executable(agent_injected_real_functions_test injected_real_functions_test.cc)
  target_link_libraries(agent_injected_real_functions_test PRIVATE GTest::gtest_main Threads::Threads ${CMAKE_DL_LIBS})
  target_compile_definitions(agent_injected_real_functions_test PRIVATE
    CILKPROF_AGENT_PATH="$<TARGET_FILE:cilkprof_agent>")
  add_dependencies(agent_injected_real_functions_test cilkprof_agent)
  gtest_discover_tests(agent_injected_real_functions_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)
endif()

# End to end: lock blame in a process the agent was injected into. Not in sanitized
# builds: a sanitized lock_contention's lock calls are bound to the sanitizer's
# interceptors, slots the agent leaves alone (got_patch.h).
if(TARGET cilkprof_agent AND TARGET cilkprof AND TARGET example_lock_contention AND NOT CILKPROF_SANITIZER_FLAGS)
  add_test(NAME agent.injected_locks_e2e
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/injected_locks_e2e.sh $<TARGET_FILE:cilkprof>
                   $<TARGET_FILE:example_lock_contention>)
  set_tests_properties(agent.injected_locks_e2e PROPERTIES
    LABELS e2e TIMEOUT 180 ENVIRONMENT "CILKPROF_AGENT=$<TARGET_FILE:cilkprof_agent>")
endif()
