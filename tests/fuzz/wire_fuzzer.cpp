// libFuzzer entry point of the wire stream targets (docs/FUZZING.md):
//   fuzz_wire_raw  the input as bytes, mutated by libFuzzer alone: mostly stops at the
//                  checksums, so it covers the decoder's rejections;
//   fuzz_wire      the same, linked with stream_mutation.cpp, whose mutator repairs
//                  the checksums and mutates messages, to reach the merging behind them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_harness.h"
#include "fuzzer_main.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cilkprof::aggregator::fuzzing;
  return Verdict(CheckWireStream(std::string_view(reinterpret_cast<const char*>(data), size)));
}
