// What every libFuzzer entry point does with a harness's verdict (fuzz_harness.h).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace cilkprof::aggregator::fuzzing {

// An oracle that failed is a crash for libFuzzer: it saves the input as a crash-*
// artifact and exits non-zero.
inline int Verdict(const std::string& failure) {
  if (!failure.empty()) {
    std::fprintf(stderr, "fuzz oracle failed: %s\n", failure.c_str());
    std::abort();
  }
  return 0;
}

}  // namespace cilkprof::aggregator::fuzzing
