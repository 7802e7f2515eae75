# Timeline (issue 16; docs/AGENT.md "Timeline"), included by agent/CMakeLists.txt. The
# rings and the per-thread buffers (no signals, no interposition) join
# cilkprof_agent_core for the unit tests; switching it on and the runtime's event
# callbacks join the agent itself.
set(CILKPROF_TIMELINE_DIR ${CMAKE_CURRENT_LIST_DIR})

target_sources(cilkprof_agent_core PRIVATE
  ${CILKPROF_TIMELINE_DIR}/timeline_ring.cc
  ${CILKPROF_TIMELINE_DIR}/timeline_buffers.cc
)

target_sources(cilkprof_agent PRIVATE
  ${CILKPROF_TIMELINE_DIR}/timeline_control.cc
)
