// libFuzzer entry point of the spill importer target (docs/FUZZING.md); linked with
// stream_mutation.cpp, whose mutator repairs the frames' checksums.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_harness.h"
#include "fuzzer_main.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cilkprof::aggregator::fuzzing;
  return Verdict(CheckSpillImport(std::string_view(reinterpret_cast<const char*>(data), size)));
}
