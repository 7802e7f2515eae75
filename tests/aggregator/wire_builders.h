// Builders of wire messages and a fake SymbolSource for the aggregator's tests: fake
// agents send frames built with the generated protobuf classes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cilkprof/aggregator/framing.h"
#include "cilkprof/aggregator/symbol_source.h"
#include "cilkprof/wire.pb.h"

namespace cilkprof::aggregator::testing {

inline wire::AgentMessage Hello(uint32_t pid, const std::string& exe = "/usr/bin/fake") {
  wire::AgentMessage m;
  wire::Hello* h = m.mutable_hello();
  h->set_protocol_version(kProtocolVersion);
  h->set_pid(pid);
  h->set_ppid(1);
  h->set_executable(exe);
  h->add_argv(exe);
  h->set_clock("cpu");
  h->set_sample_source("fake");
  h->set_period_ns(1000000);
  h->set_unwind_mode("dwarf");
  h->set_start_unix_ns(1000000000);
  auto* samples = h->add_metrics();
  samples->set_name("samples");
  samples->set_unit("count");
  auto* work = h->add_metrics();
  work->set_name("work");
  work->set_unit("ns");
  return m;
}

inline wire::AgentMessage Goodbye(const std::string& reason = "exit") {
  wire::AgentMessage m;
  m.mutable_goodbye()->set_reason(reason);
  m.mutable_goodbye()->set_end_unix_ns(3000000000);
  return m;
}

inline wire::LoadModule* AddModule(wire::Delta* d, uint32_t id, const std::string& path,
                                   const std::string& build_id = "") {
  wire::LoadModule* m = d->add_modules();
  m->set_id(id);
  m->set_path(path);
  m->set_build_id(build_id);
  return m;
}

inline wire::ThreadDelta* AddThread(wire::Delta* d, uint32_t tid, uint32_t index,
                                    const std::string& name = "") {
  wire::ThreadDelta* t = d->add_threads();
  t->set_tid(tid);
  t->set_thread_index(index);
  t->set_name(name);
  return t;
}

inline void AddNode(wire::ThreadDelta* t, uint32_t id, uint32_t parent, uint32_t module,
                    uint64_t offset, wire::EdgeKind edge = wire::EDGE_CALL,
                    wire::FrameKind kind = wire::FRAME_PC) {
  wire::NewNode* n = t->add_nodes();
  n->set_id(id);
  n->set_parent(parent);
  n->set_module_id(module);
  n->set_offset(offset);
  n->set_edge(edge);
  n->set_kind(kind);
}

inline void AddMetrics(wire::ThreadDelta* t, uint32_t node, std::vector<double> values) {
  wire::NodeMetrics* m = t->add_metrics();
  m->set_node(node);
  for (double v : values) m->add_values(v);
}

inline void AddCounters(wire::ThreadDelta* t, uint64_t samples, uint64_t partial = 0,
                        uint64_t cpu_ns = 0) {
  t->mutable_counters()->set_samples(samples);
  t->mutable_counters()->set_partial_unwinds(partial);
  t->mutable_counters()->set_cpu_ns(cpu_ns);
}

// A lock's totals (issue 14) in a Delta.
inline wire::LockDelta* AddLock(wire::Delta* d, uint32_t module, uint64_t offset, uint64_t wait_ns,
                                uint64_t blame_ns = 0, uint64_t contended = 1,
                                wire::LockKind kind = wire::LOCK_MUTEX, uint64_t timeouts = 0) {
  wire::LockDelta* l = d->add_locks();
  l->set_module_id(module);
  l->set_offset(offset);
  l->set_kind(kind);
  l->set_contended(contended);
  l->set_wait_ns(wait_ns);
  l->set_blame_ns(blame_ns);
  l->set_timeouts(timeouts);
  return l;
}

// The frames of `messages`, without the stream's magic: to append to a stream.
inline std::string FrameBytes(const std::vector<wire::AgentMessage>& messages) {
  std::string out;
  for (const auto& m : messages) AppendFrame(m, &out);
  return out;
}

// A whole stream, as an agent sends it: the magic, then the frames of `messages`.
inline std::string Frames(const std::vector<wire::AgentMessage>& messages) {
  std::string out;
  AppendStreamHeader(&out);
  return out + FrameBytes(messages);
}

// Names every address "<module basename>:0x<offset>"; counts calls per location.
class FakeSymbolSource final : public SymbolSource {
 public:
  explicit FakeSymbolSource(std::map<std::pair<std::string, uint64_t>, int>* calls = nullptr,
                            std::mutex* mutex = nullptr)
      : calls_(calls), mutex_(mutex) {}
  std::vector<profile::SourceFrame> Symbolize(const std::string& module_path,
                                              const std::string& build_id,
                                              uint64_t offset) override {
    if (calls_ != nullptr) {
      std::unique_lock<std::mutex> lock;
      if (mutex_ != nullptr) lock = std::unique_lock<std::mutex>(*mutex_);
      ++(*calls_)[{module_path, offset}];
    }
    profile::SourceFrame frame;
    const size_t slash = module_path.rfind('/');
    char hex[32];
    snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(offset));
    frame.set_function(module_path.substr(slash == std::string::npos ? 0 : slash + 1) + ":" + hex);
    frame.set_file("fake.cc");
    frame.set_line(static_cast<uint32_t>(offset & 0xffff));
    return {frame};
  }
  // Names every data address "data:<module basename>:0x<offset>" (not counted in calls).
  profile::SourceFrame SymbolizeData(const std::string& module_path, const std::string&,
                                     uint64_t offset) override {
    profile::SourceFrame frame;
    const size_t slash = module_path.rfind('/');
    char hex[32];
    snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(offset));
    frame.set_function("data:" + module_path.substr(slash == std::string::npos ? 0 : slash + 1) + ":" + hex);
    frame.set_file("fake_data.cc");
    frame.set_line(static_cast<uint32_t>(offset & 0xff));
    return frame;
  }
  std::vector<std::string> Warnings() const override { return {"fake symbolizer in use"}; }

 private:
  std::map<std::pair<std::string, uint64_t>, int>* calls_;
  std::mutex* mutex_;
};

inline SymbolSourceFactory FakeSymbols() {
  return [] { return std::make_unique<FakeSymbolSource>(); };
}

}  // namespace cilkprof::aggregator::testing
