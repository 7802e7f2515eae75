// A 64-bit linear congruential generator used by the demos as an inherently
// serial computation: each step needs the previous one (a chain of dependent
// multiply-adds the compiler cannot shorten), yet the state after k steps has a
// closed form, computed here in O(log k) for verification.
#pragma once

#include <cstdint>

namespace cilk_examples {

// Knuth's MMIX constants.
constexpr std::uint64_t kLcgMultiplier = 6364136223846793005ULL;
constexpr std::uint64_t kLcgIncrement = 1442695040888963407ULL;

// Runs the chain for `steps` steps from x (the serial work a demo wants).
inline __attribute__((noinline)) std::uint64_t lcg_run(std::uint64_t x, long steps) {
  for (long i = 0; i < steps; ++i) x = kLcgMultiplier * x + kLcgIncrement;
  return x;
}

// The same state by jumping ahead (Brown, "Random number generation with
// arbitrary strides", 1994): compose the affine map x -> a x + c with itself by
// repeated squaring.
inline std::uint64_t lcg_jump(std::uint64_t x, long steps) {
  std::uint64_t acc_mult = 1;
  std::uint64_t acc_plus = 0;
  std::uint64_t cur_mult = kLcgMultiplier;
  std::uint64_t cur_plus = kLcgIncrement;
  for (unsigned long k = static_cast<unsigned long>(steps); k > 0; k >>= 1) {
    if (k & 1) {
      acc_mult *= cur_mult;
      acc_plus = acc_plus * cur_mult + cur_plus;
    }
    cur_plus = (cur_mult + 1) * cur_plus;
    cur_mult *= cur_mult;
  }
  return acc_mult * x + acc_plus;
}

}  // namespace cilk_examples
