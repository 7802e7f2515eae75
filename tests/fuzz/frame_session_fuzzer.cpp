// libFuzzer entry point for FrameDecoder + Session (+ profile building and the file
// reader's validation). Built only with clang; not part of the default test run:
//   build/<clang>/bin/aggregator_frame_session_fuzzer -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cilkprof/aggregator/framing.h"
#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/session.h"

namespace {

class NullSymbols final : public cilkprof::aggregator::SymbolSource {
 public:
  std::vector<cilkprof::profile::SourceFrame> Symbolize(const std::string&, const std::string&,
                                                        uint64_t) override {
    cilkprof::profile::SourceFrame frame;
    frame.set_function("f");
    return {frame};
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cilkprof::aggregator;
  // The first byte chooses how the input is split into feeds, as a socket would.
  const size_t chunk = size > 0 ? 1 + data[0] % 64 : 1;
  FrameDecoder decoder(1 << 20);
  Session session;
  cilkprof::wire::AgentMessage message;
  bool failed = false;
  for (size_t at = size > 0 ? 1 : 0; at < size && !failed; at += chunk) {
    decoder.Feed(std::string_view(reinterpret_cast<const char*>(data) + at,
                                  std::min(chunk, size - at)));
    while (!failed && decoder.Next(&message)) failed = !session.Apply(message).ok();
    failed |= !decoder.status().ok();
  }
  if (session.has_hello()) {
    NullSymbols symbols;
    const auto profile = session.BuildProfile(symbols, 1);
    if (!DecodeProfileFile("fuzz", EncodeProfileFile(profile)).ok()) std::abort();
  }
  return 0;
}
