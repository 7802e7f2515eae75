# libcilk.so: the runtime. Included by CMakeLists.txt once the sources exist.
enable_language(ASM)

add_library(cilk SHARED
  src/asymmetric_fence.cpp
  src/config.cpp
  src/idle_sleep.cpp
  src/instrument_functions.cpp
  src/late_attach.cpp
  src/overflow_guard.cpp
  src/runtime.cpp
  src/scheduler.cpp
  src/spawn_shim.S
  src/stack_pool.cpp
  src/tool_events.cpp)
add_library(cilk::cilk ALIAS cilk)
target_include_directories(cilk
  PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  PRIVATE src)
target_link_libraries(cilk PRIVATE cilkprof::runtime_abi Boost::context Threads::Threads)
# The library's own ABI version: programs inline cilk/detail/runtime_entry.hpp (the
# spawn shim's arguments, child_ops, scope_state), so bump it whenever that header's
# layouts or entry points change; a program built against another version then fails
# to load (libcilk.so.N not found) instead of misbehaving.
set(CILK_ABI_VERSION 2)
set_target_properties(cilk PROPERTIES
  CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON
  VERSION ${CILK_ABI_VERSION}.0.0
  SOVERSION ${CILK_ABI_VERSION})
# Hot paths stay lean and debuggable; frame pointers let the profiler walk runtime frames.
target_compile_options(cilk PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>)
cilkprof_sanitize(cilk)
# A sanitized libcilk.so needs its sanitizer's runtime in every program that loads
# it (ASan and TSan must come first in the initial library list), including programs
# that are not sanitized themselves (e.g. the e2e programs of a sanitizer preset).
if(CILKPROF_SANITIZER_FLAGS)
  target_link_options(cilk INTERFACE ${CILKPROF_SANITIZER_FLAGS})
endif()

# Installation: library, headers, pkg-config file.
install(TARGETS cilk EXPORT cilkTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/cilk DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# cilk.pc names its prefix relative to its own directory (${pcfiledir}), so the file
# is right whatever prefix `cmake --install --prefix` picks. Directories given as
# absolute paths (-DCMAKE_INSTALL_LIBDIR=/opt/...) stay absolute: they do not move.
set(cilk_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE ${cilk_pc_dir})
  set(CILK_PC_PREFIX ${CMAKE_INSTALL_PREFIX})
else()
  # The way up from <prefix>/<libdir>/pkgconfig to <prefix>: ../.. or ../../.. (lib/<multiarch>).
  file(RELATIVE_PATH cilk_pc_up /prefix/${cilk_pc_dir} /prefix)
  string(REGEX REPLACE "/$" "" cilk_pc_up "${cilk_pc_up}")
  set(CILK_PC_PREFIX "\${pcfiledir}/${cilk_pc_up}")
endif()
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE ${CMAKE_INSTALL_${dir}})
    set(CILK_PC_${dir} ${CMAKE_INSTALL_${dir}})
  else()
    set(CILK_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
configure_file(cilk.pc.in ${CMAKE_CURRENT_BINARY_DIR}/cilk.pc @ONLY)
configure_file(cilk-profile.pc.in ${CMAKE_CURRENT_BINARY_DIR}/cilk-profile.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cilk.pc ${CMAKE_CURRENT_BINARY_DIR}/cilk-profile.pc
        DESTINATION ${cilk_pc_dir})
