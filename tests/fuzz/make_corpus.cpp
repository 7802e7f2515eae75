// Writes the synthetic seeds of the fuzz corpora, and the variants of real spill files,
// into tests/fuzz/corpus/<target>/ (run by make_corpus.sh; docs/FUZZING.md):
//
//   fuzz_make_corpus CORPUS_DIR [REAL.spill ...]
//
// Synthetic streams come from the tests' builders (tests/aggregator/wire_builders.h,
// fake_agent.h): well-formed streams of several shapes, each rule of the protocol
// broken once, and each way a frame can be damaged. Profiles are built from them by
// the aggregator's own code, plus each way a profile file can be damaged. Every seed is
// deterministic: running this again rewrites the same bytes.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cilkprof/aggregator/framing.h"
#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/session.h"
#include "fake_agent.h"
#include "fuzz_harness.h"
#include "stream_mutator.h"
#include "stream_replay.h"

namespace cilkprof::aggregator::fuzzing {
namespace {

using namespace testing;  // NOLINT: the builders
namespace fs = std::filesystem;

using Messages = std::vector<wire::AgentMessage>;

fs::path corpus;

void Put(const std::string& target, const std::string& name, const std::string& bytes) {
  fs::create_directories(corpus / target);
  std::ofstream(corpus / target / name, std::ios::binary) << bytes;
}

std::string Contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Legacy(const Messages& messages) {
  std::string out;
  for (const auto& m : messages) AppendLegacyFrame(m, &out);
  return out;
}

Messages Decoded(std::string_view stream) {
  FrameDecoder decoder;
  decoder.Feed(stream);
  Messages messages;
  wire::AgentMessage m;
  while (decoder.Next(&m)) messages.push_back(m);
  return messages;
}

// A Delta with the shapes SyntheticAgentStream never makes: work/span sites, a partial
// unwind marker, an absolute address (module 0), an unloaded module, a thread's end.
wire::AgentMessage UnusualDelta() {
  wire::AgentMessage m;
  wire::Delta* d = m.mutable_delta();
  AddModule(d, 1, "/opt/bin/unusual", "id-1");
  AddModule(d, 2, "/usr/lib/gone.so")->set_unloaded(true);
  wire::ThreadDelta* t = AddThread(d, 77, 0, "main");
  AddNode(t, 1, 0, 1, 0x1234);
  AddNode(t, 2, 1, 0, 0x7fff0000beef, wire::EDGE_SPAWN);
  AddNode(t, 3, 1, 0, 0, wire::EDGE_CALL, wire::FRAME_PARTIAL_UNWIND);
  AddNode(t, 4, 3, 2, 0x40);
  AddMetrics(t, 4, {3, 3000});
  AddMetrics(t, 2, {1});
  AddCounters(t, 4, 1, 4000);
  wire::ThreadDelta* ended = AddThread(d, 78, 1, "worker");
  AddCounters(ended, 0, 0, 0);
  ended->mutable_counters()->set_unsampled_ns(5000000);
  ended->set_exited(true);
  wire::WorkSpanDelta* ws = d->mutable_workspan();
  ws->set_clock("counter");
  ws->set_unit("units");
  ws->set_burden(15000);
  auto* module = ws->add_modules();
  module->set_index(1);
  module->set_path("/opt/bin/unusual");
  module->set_build_id("id-1");
  auto* call = ws->add_sites();
  call->set_id(1);
  call->set_kind(wire::WORKSPAN_CALL);
  call->mutable_location()->set_module(1);
  call->mutable_location()->set_offset(0x1230);
  call->set_count(2);
  call->set_work_on_work(100);
  call->set_span_on_work(60);
  auto* spawn = ws->add_sites();
  spawn->set_id(2);
  spawn->set_kind(wire::WORKSPAN_SPAWN);
  spawn->mutable_location()->set_module(1);
  spawn->mutable_location()->set_offset(0x1240);
  spawn->mutable_callee()->set_module(1);
  spawn->mutable_callee()->set_offset(0x1230);
  spawn->set_count(1);
  ws->set_work(100);
  ws->set_span(60);
  ws->set_burdened_span(75060);
  ws->set_spawns(1);
  ws->set_syncs(1);
  ws->set_computations(1);
  ws->add_regions("phase");
  for (uint32_t f : {2, 4}) ws->add_whatif_factors(f);
  for (int i = 0; i < 2 * 9; ++i) ws->add_whatif_span(50);
  d->set_flush_unix_ns(2000000000);
  d->set_process_cpu_ns(9000);
  return m;
}

// A Delta of lock blame (issue 14): FRAME_LOCK leaves under a waiter's and a holder's
// contexts, a global lock and a heap lock, their LockDelta totals and lock counters.
wire::AgentMessage LockDelta() {
  wire::AgentMessage m;
  wire::Delta* d = m.mutable_delta();
  AddModule(d, 1, "/opt/bin/locks", "id-l");
  wire::ThreadDelta* t = AddThread(d, 90, 0, "main");
  AddNode(t, 1, 0, 1, 0x1100);
  AddNode(t, 2, 1, 1, 0x4040, wire::EDGE_CALL, wire::FRAME_LOCK);
  AddNode(t, 3, 1, 0, 0x7f0000123000, wire::EDGE_CALL, wire::FRAME_LOCK);
  AddMetrics(t, 2, {0, 2500});
  AddMetrics(t, 3, {0, 700});
  AddCounters(t, 2, 0, 3000);
  wire::ThreadCounters* c = t->mutable_counters();
  c->set_lock_acquisitions(40);
  c->set_lock_contended(3);
  c->set_lock_wait_ns(3200);
  c->set_lock_blame_ns(2000);
  c->set_lock_unblamed_ns(1200);
  AddLock(d, 1, 0x4040, 2500, 2000, 2);
  AddLock(d, 0, 0x7f0000123000, 700, 0, 1, wire::LOCK_SPIN, 1);
  return m;
}

// Streams that decode and merge completely, of several shapes.
void WellFormedStreams(std::vector<std::pair<std::string, Messages>>* out) {
  out->push_back({"hello-only", {Hello(1)}});
  out->push_back({"hello-goodbye", {Hello(2), Goodbye()}});
  out->push_back({"one-thread", SyntheticAgentStream(3, 1, 2, 1)});
  out->push_back({"three-threads", SyntheticAgentStream(4, 2, 5, 3)});
  out->push_back({"no-goodbye", SyntheticAgentStream(5, 3, 4, 2, false)});
  out->push_back({"exec-goodbye", {Hello(6), UnusualDelta(), Goodbye("exec")}});
  out->push_back({"signal-goodbye", {Hello(7), UnusualDelta(), Goodbye("signal 11 (SIGSEGV)")}});
  out->push_back({"unusual-delta", {Hello(8), UnusualDelta()}});
  out->push_back({"lock-blame", {Hello(15), LockDelta(), Goodbye()}});
  // Two images of one process: the wire harness folds them as the server does.
  const auto before = SyntheticAgentStream(14, 8, 2, 2);
  Messages chain(before.begin(), before.end() - 1);
  chain.push_back(Goodbye("exec"));
  for (const auto& m : SyntheticAgentStream(14, 9, 2, 1)) chain.push_back(m);
  out->push_back({"exec-chain", chain});
}

void WriteWire() {
  std::vector<std::pair<std::string, Messages>> streams;
  WellFormedStreams(&streams);
  for (const auto& [name, messages] : streams) Put("wire", name, Frames(messages));
  const Messages base = SyntheticAgentStream(9, 4, 3, 2);
  Put("wire", "legacy-format", Legacy(base));
  Put("wire", "empty", "");
  Put("wire", "magic-only", std::string(kStreamMagic));
  Put("wire", "magic-of-format-3", "\x89" "CPWIRE3" + FrameBytes(base));
  const std::string good = Frames(base);
  std::string damaged = good;
  damaged[damaged.size() / 2] ^= 0x10;
  Put("wire", "damaged-payload", damaged);
  std::string zero = Frames({Hello(10)});
  zero.append(8, '\0');
  Put("wire", "zero-length-frame", zero);
  std::string oversized = Frames({Hello(11)});
  oversized += std::string("\xff\xff\xff\x7f", 4) + std::string(12, 'x');
  Put("wire", "oversized-frame", oversized);
  Put("wire", "cut-in-header", good.substr(0, kStreamMagic.size() + 5));
  Put("wire", "cut-in-payload", good.substr(0, good.size() - 7));
  // The payload parses as no AgentMessage (0xff is not a valid tag), checksum right.
  std::string unparsable = Frames({Hello(12)});
  const std::string junk(9, '\xff');
  unparsable += std::string("\x09\0\0\0", 4);
  const uint32_t crc = FrameChecksum(junk);
  for (int b = 0; b < 4; ++b) unparsable.push_back(static_cast<char>((crc >> (8 * b)) & 0xff));
  Put("wire", "unparsable-payload", unparsable + junk);
  // Each rule of the protocol broken once (stream_mutator.h), deterministically.
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    StreamMutator mutator(seed);
    Put("wire", "protocol-break-" + std::to_string(seed),
        mutator.MutateMessages(SyntheticAgentStream(20 + seed, seed, 3, 2)));
  }
  Put("wire", "delta-before-hello", Frames({base[1], base[0]}));
  Put("wire", "two-hellos", Frames({Hello(13), Hello(13)}));
  // The lock rules (issue 14), each broken once.
  wire::AgentMessage lock_with_child = LockDelta();
  AddNode(lock_with_child.mutable_delta()->mutable_threads(0), 4, 2, 1, 0x1200);
  Put("wire", "lock-with-child", Frames({Hello(16), lock_with_child}));
  wire::AgentMessage lock_twice = LockDelta();
  AddLock(lock_twice.mutable_delta(), 1, 0x4040, 1);
  Put("wire", "lock-entry-twice", Frames({Hello(17), lock_twice}));
  wire::AgentMessage lock_kind = LockDelta();
  lock_kind.mutable_delta()->mutable_locks(0)->set_kind(static_cast<wire::LockKind>(7));
  Put("wire", "lock-unknown-kind", Frames({Hello(18), lock_kind}));
}

void WriteSpill(const std::vector<fs::path>& real) {
  for (const fs::path& path : real) {
    const std::string name = path.stem().string();
    const std::string bytes = Contents(path);
    if (Decoded(bytes).empty()) {
      std::fprintf(stderr, "%s: not a spill file of format 2\n", path.c_str());
      std::exit(1);
    }
    Put("spill", name, bytes);
    Put("wire", name, bytes);
    Put("spill", name + "-legacy", Legacy(Decoded(bytes)));
    Put("spill", name + "-cut", bytes.substr(0, bytes.size() * 2 / 3));
    std::string flipped = bytes;
    flipped[flipped.size() / 3] ^= 0x01;
    Put("spill", name + "-flipped", flipped);
  }
  Put("spill", "synthetic", Frames(SyntheticAgentStream(30, 5, 6, 3)));
  Put("spill", "synthetic-killed", Frames(SyntheticAgentStream(31, 6, 4, 2, false)));
  Put("spill", "synthetic-legacy", Legacy(SyntheticAgentStream(32, 7, 3, 2)));
  Put("spill", "unusual", Frames({Hello(33), UnusualDelta(), Goodbye()}));
  Put("spill", "lock-blame", Frames({Hello(35), LockDelta(), Goodbye()}));
  Put("spill", "empty", "");
  Put("spill", "no-hello", Frames({Goodbye()}));
  std::string damaged_hello = Frames({Hello(34), Goodbye()});
  damaged_hello[kStreamMagic.size() + kFrameHeaderBytes + 3] ^= 0x40;
  Put("spill", "damaged-hello", damaged_hello);
}

void PutProfile(const std::string& name, const std::string& file) { Put("profile", name, file); }

std::string Header(uint32_t version, uint64_t length, uint64_t checksum) {
  std::string out("CILKPROF");
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((version >> (8 * i)) & 0xff));
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((checksum >> (8 * i)) & 0xff));
  return out;
}

// A profile file whose header is right for `payload`.
std::string WithHeader(const std::string& payload, uint32_t version = kProfileFormatVersion) {
  return Header(version, payload.size(), Fnv1a64(payload)) + payload;
}

void WriteProfiles() {
  std::vector<std::pair<std::string, Messages>> streams;
  WellFormedStreams(&streams);
  profile::Profile sample, locks;
  for (const auto& [name, messages] : streams) {
    Session session;
    for (const auto& m : messages) {
      if (!session.Apply(m).ok()) break;  // the exec chain: its first image
    }
    FakeSymbolSource symbols;
    profile::Profile p = session.BuildProfile(symbols, 1);
    PutProfile(name, EncodeProfileFile(p));
    if (name == "three-threads") sample = p;
    if (name == "lock-blame") locks = p;
  }
  const std::string good = EncodeProfileFile(sample);
  PutProfile("empty", "");
  PutProfile("not-a-profile", "#!/bin/sh\necho hello\n");
  PutProfile("header-only-short", good.substr(0, 20));
  PutProfile("truncated", good.substr(0, good.size() - 10));
  PutProfile("trailing-bytes", good + "extra");
  std::string corrupt = good;
  corrupt[corrupt.size() - 5] ^= 0x20;
  PutProfile("checksum-mismatch", corrupt);
  const std::string payload = good.substr(kProfileHeaderBytes);
  PutProfile("version-0", WithHeader(payload, 0));
  PutProfile("version-2", WithHeader(payload, 2));
  PutProfile("unparsable-payload", WithHeader(std::string(16, '\xff')));
  PutProfile("empty-payload", WithHeader(""));
  // Parses, but breaks an index rule (profile_io.cpp, ValidateIndices).
  auto broken = [&](const std::string& name, auto edit) {
    profile::Profile p = sample;
    edit(&p);
    std::string bytes;
    p.SerializeToString(&bytes);
    PutProfile(name, WithHeader(bytes));
  };
  broken("parent-after-child", [](profile::Profile* p) { p->mutable_nodes(1)->set_parent(5); });
  broken("location-out-of-range", [](profile::Profile* p) { p->mutable_nodes(2)->set_location(1000); });
  broken("module-out-of-range", [](profile::Profile* p) { p->mutable_locations(1)->set_module(99); });
  broken("location-without-frame", [](profile::Profile* p) { p->mutable_locations(1)->clear_frames(); });
  broken("no-nodes", [](profile::Profile* p) { p->clear_nodes(); });
  broken("no-modules", [](profile::Profile* p) { p->clear_modules(); });
  broken("too-many-values", [](profile::Profile* p) {
    for (int i = 0; i < 5; ++i) p->mutable_nodes(1)->add_exclusive(1);
  });
  broken("nan-value", [](profile::Profile* p) { p->mutable_nodes(1)->add_exclusive(0.0 / 0.0); });
  broken("payload-version-0", [](profile::Profile* p) { p->set_format_version(0); });
  // The lock rules (issue 14).
  auto broken_locks = [&](const std::string& name, auto edit) {
    profile::Profile p = locks;
    edit(&p);
    PutProfile(name, WithHeader(p.SerializeAsString()));
  };
  broken_locks("lock-location-out-of-range", [](profile::Profile* p) { p->mutable_locks(0)->set_location(1000); });
  broken_locks("lock-node-with-child", [](profile::Profile* p) {
    for (int i = 1; i < p->nodes_size(); ++i) {
      if (p->nodes(i).kind() != wire::FRAME_LOCK) continue;
      profile::Node* child = p->add_nodes();
      child->set_parent(static_cast<uint32_t>(i));
      child->set_location(p->nodes(1).location());
      return;
    }
  });
}

}  // namespace
}  // namespace cilkprof::aggregator::fuzzing

int main(int argc, char** argv) {
  using namespace cilkprof::aggregator::fuzzing;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [REAL.spill ...]\n", argv[0]);
    return 2;
  }
  corpus = argv[1];
  std::vector<fs::path> real(argv + 2, argv + argc);
  WriteWire();
  WriteSpill(real);
  WriteProfiles();
  return 0;
}
