# OpenMP task programs on LLVM's libomp (issue 17; docs/OPENMP.md), for examples/openmp
# and tests/ompt.
#
# The project itself builds with any C++20 compiler (g++-12 by default); OpenMP programs
# are built with clang++ -fopenmp, which links libomp, the runtime with OMPT. A program
# built with g++ -fopenmp links libgomp, which has no OMPT (cilkprof run --openmp=libomp
# runs such a program on libomp).
#
#   CILKPROF_OPENMP_FOUND        clang++ with -fopenmp and libomp were found
#   CILKPROF_OPENMP_CXX          that clang++
#   CILKPROF_LIBOMP              the libomp shared library (libomp.so.5)
#
#   cilkprof_add_openmp_program(<target> OUTPUT <file name in bin/> SOURCES <src>...
#                               [INCLUDE_DIRS <dir>...] [FLAGS <flag>...])
# builds <bin>/<file name> with `clang++ -std=c++20 -O2 -g -fno-omit-frame-pointer
# -fopenmp` (frame pointers for the frame-pointer unwinder, debug information for
# symbolization) and adds <target> (part of ALL). An unsanitized program, like every
# program the preloaded agent is tested in.
include_guard(GLOBAL)

find_program(CILKPROF_OPENMP_CXX NAMES clang++-14 clang++ DOC "clang++ for OpenMP programs")
find_library(CILKPROF_LIBOMP NAMES libomp.so.5 omp PATHS /usr/lib/llvm-14/lib NO_DEFAULT_PATH)
if(NOT CILKPROF_LIBOMP)
  find_library(CILKPROF_LIBOMP NAMES libomp.so.5 omp)
endif()
set(CILKPROF_OPENMP_FOUND FALSE)
if(CILKPROF_OPENMP_CXX AND CILKPROF_LIBOMP)
  set(CILKPROF_OPENMP_FOUND TRUE)
else()
  message(STATUS "OpenMP programs: skipped (need clang++ and libomp: apt-get install clang-14 libomp-14-dev)")
endif()

function(cilkprof_add_openmp_program target)
  cmake_parse_arguments(ARG "" "OUTPUT" "SOURCES;INCLUDE_DIRS;FLAGS" ${ARGN})
  if(NOT CILKPROF_OPENMP_FOUND)
    return()
  endif()
  set(output ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/${ARG_OUTPUT})
  set(sources)
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND sources ${abs})
  endforeach()
  set(includes)
  foreach(dir IN LISTS ARG_INCLUDE_DIRS)
    list(APPEND includes -I${dir})
  endforeach()
  get_filename_component(libomp_dir ${CILKPROF_LIBOMP} DIRECTORY)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CILKPROF_OPENMP_CXX} -std=c++20 -O2 -g -fno-omit-frame-pointer -fopenmp
            ${includes} ${ARG_FLAGS} ${sources} -o ${output}
            -L${libomp_dir} -Wl,-rpath,${libomp_dir}
    DEPENDS ${sources}
    COMMENT "Building OpenMP program ${ARG_OUTPUT} with ${CILKPROF_OPENMP_CXX} -fopenmp"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${output})
endfunction()
