# The work/span instrumentation tool (issue 5; docs/WORKSPAN.md), included by
# agent/CMakeLists.txt. The engine (no agent dependencies beyond the module table and
# the proto writer) joins cilkprof_agent_core; the agent glue (configuration, sending,
# exported program API) joins the agent itself. The in-process tests compile the
# engine's sources again, sanitized (tests/workspan/exactness/CMakeLists.txt).
set(CILKPROF_WORKSPAN_DIR ${CMAKE_CURRENT_LIST_DIR})

target_sources(cilkprof_agent_core PRIVATE
  ${CILKPROF_WORKSPAN_DIR}/engine.cc
  ${CILKPROF_WORKSPAN_DIR}/pool.cc
  ${CILKPROF_WORKSPAN_DIR}/profile.cc
  ${CILKPROF_WORKSPAN_DIR}/report.cc
)
# The hooks run in the runtime's OVERHEAD state, where the sampler's frame-pointer
# unwinder walks through them to the spawn or sync site: keep their frame pointers.
set_source_files_properties(${CILKPROF_WORKSPAN_DIR}/engine.cc ${CILKPROF_WORKSPAN_DIR}/profile.cc
  ${CILKPROF_WORKSPAN_DIR}/pool.cc ${CILKPROF_WORKSPAN_DIR}/api.cc PROPERTIES COMPILE_OPTIONS -fno-omit-frame-pointer)
# engine.h includes the runtime ABI (a contract header).
target_include_directories(cilkprof_agent_core PUBLIC ${PROJECT_SOURCE_DIR}/scheduler_patch/include)

target_sources(cilkprof_agent PRIVATE
  ${CILKPROF_WORKSPAN_DIR}/attach.cc
  ${CILKPROF_WORKSPAN_DIR}/api.cc
  ${CILKPROF_WORKSPAN_DIR}/settings.cc  # the environment, shared with the OpenMP tool
)
