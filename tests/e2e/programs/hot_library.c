// A shared library loaded with dlopen by dlopen_main.c; its hot function must be
// named, with file and line, in the profile.
#include "burn.h"

__attribute__((noinline)) unsigned long long hot_function(unsigned long units) {
  return burn_iterations(units * BURN_ITERATIONS_PER_UNIT, units);  // HOT_LINE
}
