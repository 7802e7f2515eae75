// libFuzzer entry point of the profile reader target (docs/FUZZING.md): both read
// paths, cross-checked. Its mutator mostly repairs the header's length and checksum
// after libFuzzer's mutation, so that the payload gets parsed and validated; the other
// mutations keep the header checks covered.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_harness.h"
#include "fuzzer_main.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  size = LLVMFuzzerMutate(data, size, max_size);
  if (seed % 8 != 0) cilkprof::aggregator::fuzzing::RepairProfileHeader(data, size);
  return size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cilkprof::aggregator::fuzzing;
  return Verdict(CheckProfileReader(std::string_view(reinterpret_cast<const char*>(data), size)));
}
