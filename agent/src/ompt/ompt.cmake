# OpenMP tasks through OMPT (issue 17; docs/OPENMP.md), included by agent/CMakeLists.txt.
# The agent is the OMPT tool of libomp (ompt_start_tool). Each module adds its own
# sources here.
set(CILKPROF_OMPT_DIR ${CMAKE_CURRENT_LIST_DIR})
# omp-tools.h: LLVM's (libomp-dev / libclang-common); the agent needs only the header.
find_path(CILKPROF_OMP_TOOLS_INCLUDE omp-tools.h
  PATHS /usr/lib/llvm-14/lib/clang/14.0.6/include /usr/lib/llvm-14/include
  PATH_SUFFIXES openmp)
