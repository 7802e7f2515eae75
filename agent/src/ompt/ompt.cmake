# OpenMP tasks through OMPT (issue 17; docs/OPENMP.md), included by agent/CMakeLists.txt.
# The agent is the OMPT tool of libomp (ompt_start_tool). Each module adds its own
# sources here.
set(CILKPROF_OMPT_DIR ${CMAKE_CURRENT_LIST_DIR})
# omp-tools.h: LLVM's (libomp-dev / libclang-common); the agent needs only the header.
find_path(CILKPROF_OMP_TOOLS_INCLUDE omp-tools.h
  PATHS /usr/lib/llvm-14/lib/clang/14.0.6/include /usr/lib/llvm-14/include
  PATH_SUFFIXES openmp)
if(NOT CILKPROF_OMP_TOOLS_INCLUDE)
  message(FATAL_ERROR "omp-tools.h not found (the agent is libomp's OMPT tool): apt-get install libomp-14-dev")
endif()
# Only the header: clang's builtin include directory that holds it also has clang's own
# stddef.h and friends, which g++ must not see.
set(CILKPROF_OMP_TOOLS_COPY_DIR ${CMAKE_CURRENT_BINARY_DIR}/omp_tools_include)
configure_file(${CILKPROF_OMP_TOOLS_INCLUDE}/omp-tools.h ${CILKPROF_OMP_TOOLS_COPY_DIR}/omp-tools.h COPYONLY)
add_library(cilkprof_omp_tools INTERFACE)
target_include_directories(cilkprof_omp_tools INTERFACE ${CILKPROF_OMP_TOOLS_COPY_DIR})
target_link_libraries(cilkprof_agent PRIVATE cilkprof_omp_tools)

# The tool core (ompt_tool.cc: registration, callbacks; ompt_records.cc: threads and
# the record pools; ompt_runtime_view.cc: the "libomp-ompt" runtime view).
target_sources(cilkprof_agent PRIVATE
  ${CILKPROF_OMPT_DIR}/ompt_records.cc
  ${CILKPROF_OMPT_DIR}/ompt_runtime_view.cc
  ${CILKPROF_OMPT_DIR}/ompt_tool.cc
)

# Lock waits and blame from the mutex callbacks (ompt_locks.cc; docs/OPENMP.md "Locks
# and critical sections"). Built with frame pointers, as the lock files are: the frames
# between the runtime's call and the lock clocks' unwind must be walkable.
target_sources(cilkprof_agent PRIVATE ${CILKPROF_OMPT_DIR}/ompt_locks.cc)
set_source_files_properties(${CILKPROF_OMPT_DIR}/ompt_locks.cc PROPERTIES COMPILE_OPTIONS -fno-omit-frame-pointer)

# Work and span of task graphs (ompt_workspan.*; docs/OPENMP.md "Work and span of task
# graphs"). The engine is a static library of its own, so unit tests drive it with
# synthetic events without the agent; the agent glue (environment, sending) joins the
# agent.
add_library(cilkprof_ompt_workspan STATIC ${CILKPROF_OMPT_DIR}/ompt_workspan.cc)
target_link_libraries(cilkprof_ompt_workspan PUBLIC cilkprof_agent_core cilkprof_omp_tools)
set_target_properties(cilkprof_ompt_workspan PROPERTIES
  POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
target_sources(cilkprof_agent PRIVATE ${CILKPROF_OMPT_DIR}/ompt_workspan_attach.cc)
target_link_libraries(cilkprof_agent PRIVATE cilkprof_ompt_workspan)

# Creation contexts of tasks and regions (creation_path.cc; docs/OPENMP.md "Logical
# paths of tasks"): captured in task_create and parallel_begin, walked by the sampler.
target_sources(cilkprof_agent PRIVATE ${CILKPROF_OMPT_DIR}/creation_path.cc)
