// Deterministic CPU burning for the end-to-end test programs: a fixed number of
// iterations, so CPU shares between functions follow the iteration counts whatever
// the machine's speed.
#pragma once
#include <stdint.h>

static inline uint64_t burn_iterations(uint64_t iterations, uint64_t seed) {
  volatile uint64_t x = seed | 1;
  for (uint64_t i = 0; i < iterations; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

// Iterations per "unit" of work; ~10 ms per unit on a 2020s core. Programs scale
// their run length by the UNITS environment variable (default 40 units).
#define BURN_ITERATIONS_PER_UNIT 4000000ull
