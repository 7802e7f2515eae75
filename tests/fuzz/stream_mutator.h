// Deterministic generators of hostile byte streams for the aggregator: random bytes,
// byte-level mutations of valid frame streams, and message-level mutations that keep
// the framing valid but break the protocol's rules.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cilkprof/aggregator/framing.h"
#include "cilkprof/wire.pb.h"

namespace cilkprof::aggregator::fuzzing {

class StreamMutator {
 public:
  explicit StreamMutator(uint64_t seed) : rng_(seed) {}

  uint64_t Below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }

  std::string RandomBytes(size_t max_size) {
    std::string out(Below(max_size + 1), '\0');
    for (char& c : out) c = static_cast<char>(rng_());
    // Often start with a plausible small length prefix, so the payload gets parsed.
    if (out.size() >= 4 && Below(2) == 0) {
      const uint32_t n = static_cast<uint32_t>(Below(out.size()) + 1);
      for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
    }
    return out;
  }

  // Flips bits, inserts, deletes, duplicates or truncates bytes of a valid stream.
  std::string MutateBytes(std::string bytes) {
    const int edits = 1 + static_cast<int>(Below(8));
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      const size_t at = Below(bytes.size());
      switch (Below(6)) {
        case 0: bytes[at] = static_cast<char>(bytes[at] ^ (1 << Below(8))); break;
        case 1: bytes[at] = static_cast<char>(rng_()); break;
        case 2: bytes.insert(at, 1, static_cast<char>(rng_())); break;
        case 3: bytes.erase(at, 1 + Below(16)); break;
        case 4: bytes.insert(at, bytes.substr(at, Below(64))); break;
        case 5: bytes.resize(at); break;
      }
    }
    return bytes;
  }

  // Breaks one rule of the protocol in one message, keeping it well framed.
  void MutateMessage(wire::AgentMessage* m) {
    if (m->has_hello()) {
      switch (Below(3)) {
        case 0: m->mutable_hello()->set_protocol_version(static_cast<uint32_t>(rng_())); break;
        case 1: m->mutable_hello()->add_metrics()->set_name(""); break;
        case 2: m->clear_hello(); break;
      }
      return;
    }
    if (!m->has_delta()) {
      m->mutable_delta();  // a Delta where a Goodbye was
      return;
    }
    wire::Delta* d = m->mutable_delta();
    if (d->threads_size() == 0) {
      d->add_modules()->set_id(0);
      return;
    }
    wire::ThreadDelta* t = d->mutable_threads(static_cast<int>(Below(d->threads_size())));
    const uint32_t any = static_cast<uint32_t>(Below(4) == 0 ? rng_() : Below(64));
    switch (Below(9)) {
      case 0:
        if (t->nodes_size() > 0) t->mutable_nodes(0)->set_parent(any);
        break;
      case 1:
        if (t->nodes_size() > 0) t->mutable_nodes(0)->set_module_id(any);
        break;
      case 2:
        if (t->nodes_size() > 0) t->mutable_nodes(0)->set_id(any);
        break;
      case 3:
        if (t->nodes_size() > 0) t->mutable_nodes(0)->set_kind(static_cast<wire::FrameKind>(any));
        break;
      case 4: t->add_metrics()->set_node(any); break;
      case 5: {
        auto* metrics = t->add_metrics();
        metrics->set_node(0);
        for (uint64_t i = 0, n = Below(6); i < n; ++i) metrics->add_values(1);
        break;
      }
      case 6: {
        auto* metrics = t->add_metrics();
        metrics->add_values(Below(2) ? std::numeric_limits<double>::infinity()
                                     : std::numeric_limits<double>::quiet_NaN());
        break;
      }
      case 7: {
        auto* module = d->add_modules();
        module->set_id(1);
        module->set_path("/changed");
        break;
      }
      case 8: *d->add_threads() = *t; break;  // the same nodes defined twice
    }
  }

  // A valid stream with some messages broken, dropped, duplicated or reordered.
  std::string MutateMessages(std::vector<wire::AgentMessage> messages) {
    const int edits = 1 + static_cast<int>(Below(3));
    for (int e = 0; e < edits && !messages.empty(); ++e) {
      const size_t at = Below(messages.size());
      switch (Below(4)) {
        case 0:
        case 1: MutateMessage(&messages[at]); break;
        case 2: messages.erase(messages.begin() + static_cast<long>(at)); break;
        case 3: std::swap(messages[at], messages[Below(messages.size())]); break;
      }
    }
    std::string out;
    AppendStreamHeader(&out);
    for (const auto& m : messages) AppendFrame(m, &out);
    return out;
  }

  // Splits a stream into random chunk sizes, as sockets deliver it.
  std::vector<std::string> Chunks(const std::string& bytes) {
    std::vector<std::string> out;
    for (size_t at = 0; at < bytes.size();) {
      const size_t n = 1 + Below(Below(2) ? 16 : 4096);
      out.push_back(bytes.substr(at, n));
      at += n;
    }
    return out;
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace cilkprof::aggregator::fuzzing
