# Runs one example program and checks how it ended.
#   cmake -DPROGRAM=<path> [-DARGS="<space-separated arguments>"]
#         -DEXPECT_EXIT=<status> -DEXPECT_OUTPUT=<regex> -P run_example.cmake
# Passes when the exit status equals EXPECT_EXIT and stdout+stderr match
# EXPECT_OUTPUT (ctest's PASS_REGULAR_EXPRESSION alone would ignore the status).
# The environment (CILK_NWORKERS, CILK_FORCE_STEAL) is inherited from the test.
if(NOT DEFINED PROGRAM OR NOT DEFINED EXPECT_EXIT OR NOT DEFINED EXPECT_OUTPUT)
  message(FATAL_ERROR "run_example.cmake needs -DPROGRAM, -DEXPECT_EXIT and -DEXPECT_OUTPUT")
endif()
separate_arguments(arg_list UNIX_COMMAND "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${arg_list}
  RESULT_VARIABLE status
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
message("${out}${err}")
if(NOT "${status}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: exit status '${status}', expected ${EXPECT_EXIT}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: output does not match '${EXPECT_OUTPUT}'")
endif()
