# Every dependency comes from a Debian 12 package; scripts/install-deps.sh installs them.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

# nongnu libunwind (Debian libunwind-dev). LLVM's libunwind (libunwind-14-dev) ships a
# header of the same name without unw_init_local2 and cannot unwind from a signal
# context the way the agent needs, so detect the flavour and say what to do.
pkg_check_modules(LIBUNWIND REQUIRED IMPORTED_TARGET libunwind)
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_INCLUDES ${LIBUNWIND_INCLUDE_DIRS})
set(CMAKE_REQUIRED_LIBRARIES PkgConfig::LIBUNWIND)
check_cxx_source_compiles("
#define UNW_LOCAL_ONLY
#include <libunwind.h>
int main() { unw_context_t uc; unw_cursor_t c; unw_getcontext(&uc);
             return unw_init_local2(&c, &uc, UNW_INIT_SIGNAL_FRAME); }"
  CILKPROF_HAVE_NONGNU_LIBUNWIND)
unset(CMAKE_REQUIRED_INCLUDES)
unset(CMAKE_REQUIRED_LIBRARIES)
if(NOT CILKPROF_HAVE_NONGNU_LIBUNWIND)
  message(FATAL_ERROR
    "Cilkprof needs the nongnu libunwind (unw_init_local2 with UNW_INIT_SIGNAL_FRAME), "
    "but the libunwind.h found is another flavour (LLVM's libunwind-14-dev?). "
    "Run: apt-get install libunwind-dev   (apt removes libunwind-14-dev; that is fine)")
endif()

pkg_check_modules(LIBDW REQUIRED IMPORTED_TARGET libdw libelf)

find_package(Protobuf REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS context)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)

if(CILKPROF_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(CILKPROF_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
