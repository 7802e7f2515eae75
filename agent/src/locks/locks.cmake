# Lock blame (issue 14; docs/AGENT.md "Lock blame"), included by agent/CMakeLists.txt.
# The lock table, the blame arithmetic and the lock clocks (no signals, no
# interposition) join cilkprof_agent_core for the unit tests; the interposed functions,
# their contended paths and the flusher's reporting join the agent itself.
set(CILKPROF_LOCKS_DIR ${CMAKE_CURRENT_LIST_DIR})

target_sources(cilkprof_agent_core PRIVATE
  ${CILKPROF_LOCKS_DIR}/lock_table.cc
  ${CILKPROF_LOCKS_DIR}/lock_clock.cc
)

target_sources(cilkprof_agent PRIVATE
  ${CILKPROF_LOCKS_DIR}/lock_accounting.cc
  ${CILKPROF_LOCKS_DIR}/lock_calls.cc
  ${CILKPROF_LOCKS_DIR}/lock_report.cc
  ${CILKPROF_LOCKS_DIR}/tail_call.cc
)
# The frames between the program's lock call and the lock clocks' unwind must be
# walkable by the frame-pointer unwinder.
set_source_files_properties(${CILKPROF_LOCKS_DIR}/lock_accounting.cc ${CILKPROF_LOCKS_DIR}/lock_calls.cc
  PROPERTIES COMPILE_OPTIONS -fno-omit-frame-pointer)
