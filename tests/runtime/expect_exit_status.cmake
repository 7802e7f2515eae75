# cmake -DPROGRAM=<path> -DEXPECTED=<status> [-DEXPECTED_OUTPUT=<regex>] -P expect_exit_status.cmake
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE status OUTPUT_VARIABLE output TIMEOUT 20)
if(NOT status STREQUAL "${EXPECTED}")
  message(FATAL_ERROR "${PROGRAM} exited with '${status}', expected ${EXPECTED}")
endif()
if(DEFINED EXPECTED_OUTPUT AND NOT output MATCHES "${EXPECTED_OUTPUT}")
  message(FATAL_ERROR "${PROGRAM} printed '${output}', expected a match for '${EXPECTED_OUTPUT}'")
endif()
