// libFuzzer's custom mutator for frame streams (fuzz_wire, fuzz_spill_import).
//
// A byte mutation almost never keeps a frame's CRC32C right, so libFuzzer alone stops
// at the checksum. Here seven mutations in eight get their checksums repaired after
// libFuzzer's byte mutation (RepairFrameChecksums), and one in four instead breaks a
// rule of the protocol in a decoded message and frames the stream again
// (StreamMutator::MutateMessages: a bad parent or module, a NaN, a repeated node,
// messages dropped or swapped). The eighth keeps its damage, to keep the checksum
// errors covered.
#include <cstring>
#include <vector>

#include "cilkprof/aggregator/framing.h"
#include "fuzz_harness.h"
#include "stream_mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

// The messages a stream decodes into before its first error.
std::vector<cilkprof::wire::AgentMessage> DecodedMessages(const uint8_t* data, size_t size) {
  cilkprof::aggregator::FrameDecoder decoder;
  decoder.Feed(std::string_view(reinterpret_cast<const char*>(data), size));
  std::vector<cilkprof::wire::AgentMessage> messages;
  cilkprof::wire::AgentMessage message;
  while (decoder.Next(&message)) messages.push_back(message);
  return messages;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  using namespace cilkprof::aggregator::fuzzing;
  if (seed % 4 == 0) {
    auto messages = DecodedMessages(data, size);
    if (!messages.empty()) {
      StreamMutator mutator(seed);
      const std::string stream = mutator.MutateMessages(std::move(messages));
      if (stream.size() <= max_size) {
        std::memcpy(data, stream.data(), stream.size());
        return stream.size();
      }
    }
  }
  size = LLVMFuzzerMutate(data, size, max_size);
  if (seed % 8 != 1) RepairFrameChecksums(data, size);
  return size;
}
