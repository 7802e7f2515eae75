// The agent's side of the frame stream and of complete spill files (issue 12): sealed
// frames decode in the aggregator's reader; ended threads are folded into one tree and
// kept; a spill that starts after the aggregator went away begins with the snapshot,
// keeps a pending Goodbye and drops the data frames the snapshot covers.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "cilkprof/aggregator/framing.h"
#include "cilkprof/aggregator/session.h"
#include "frames.h"
#include "retired_threads.h"
#include "stream_format.h"
#include "transport.h"

namespace cilkprof::agent {
namespace {

using unwinder::Edge;
using unwinder::Frame;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string TempDir() {
  char pattern[] = "/tmp/cilkprof-spill-test-XXXXXX";
  return mkdtemp(pattern);
}

HelloMsg TestHello() {
  HelloMsg h;
  h.pid = 4242;
  h.executable = "/bin/test";
  h.clock = "cpu";
  h.period_ns = 1000000;
  h.metrics.push_back({"samples", "count", ""});
  return h;
}

DeltaMsg OneThreadDelta(uint32_t tid, double samples) {
  DeltaMsg d;
  ThreadDeltaMsg t;
  t.tid = tid;
  t.metrics.push_back(NodeMetricsMsg{0, {samples}});
  t.counters.samples = static_cast<uint64_t>(samples);
  d.threads.push_back(t);
  return d;
}

TEST(StreamFormatTest, SealedFramesDecodeInTheAggregatorsReader) {
  std::string stream(kStreamMagic, sizeof kStreamMagic);
  stream += SealFrames(EncodeHelloFrame(TestHello()) + EncodeDeltaFrame(OneThreadDelta(7, 3)));
  stream += SealFrames(EncodeGoodbyeFrame(GoodbyeMsg{1, "exit", 0, ""}));
  aggregator::FrameDecoder decoder;
  ASSERT_TRUE(decoder.Feed(stream)) << decoder.status().message();
  wire::AgentMessage m;
  aggregator::Session session;
  int n = 0;
  while (decoder.Next(&m)) {
    ASSERT_TRUE(session.Apply(m).ok());
    ++n;
  }
  EXPECT_EQ(n, 3);
  EXPECT_TRUE(decoder.Finish().ok()) << decoder.Finish().message();
  EXPECT_FALSE(decoder.legacy_format());
  EXPECT_TRUE(session.has_goodbye());
}

TEST(RetiredThreadsTest, EndedThreadsAreFoldedIntoOneTreeAndKeepTheirCounters) {
  ModuleTable modules;
  RetiredThreads retired;
  auto record = [](ThreadRecord* t, std::initializer_list<uintptr_t> innermost_first, uint64_t weight) {
    std::vector<Frame> frames;
    for (uintptr_t pc : innermost_first) frames.push_back(Frame{pc, Edge::kCall});
    RecordSample(&t->cct, &t->counters, frames.data(), static_cast<uint32_t>(frames.size()), false, weight);
  };
  ThreadRecord a, b;
  ASSERT_TRUE(a.cct.Init(CctOptions{}));
  ASSERT_TRUE(b.cct.Init(CctOptions{}));
  a.tid = 11;
  a.thread_index = 1;
  b.tid = 12;
  b.thread_index = 2;
  record(&a, {0x30, 0x20, 0x10}, 100);  // main(0x10) -> f(0x20) -> g(0x30)
  record(&a, {0x30, 0x20, 0x10}, 100);
  record(&b, {0x40, 0x20, 0x10}, 50);  // main -> f -> h(0x40)
  record(&b, {0x30, 0x20, 0x10}, 25);  // main -> f -> g again
  retired.Add(a, "worker-a", &modules);
  retired.Add(b, "worker-b", &modules);

  ASSERT_EQ(retired.threads().size(), 2u);
  EXPECT_EQ(retired.threads()[0].name, "worker-a");
  EXPECT_EQ(retired.threads()[1].counters.samples, 2u);
  EXPECT_EQ(retired.threads()[0].counters.cpu_ns, 200u);
  // root, main, f, g, h: the shared prefix is one path.
  ASSERT_EQ(retired.nodes().size(), 5u);
  uint64_t g_work = 0, h_work = 0;
  for (const RetiredThreads::Node& n : retired.nodes()) {
    if (n.offset == 0x30) g_work = n.metrics[kMetricWork];
    if (n.offset == 0x40) h_work = n.metrics[kMetricWork];
  }
  EXPECT_EQ(g_work, 225u);
  EXPECT_EQ(h_work, 50u);

  // The snapshot declares the tree under the first thread and ends both threads.
  DeltaMsg delta;
  size_t bytes = 0;
  std::vector<DeltaMsg> frames;
  retired.AppendSnapshot(&delta, &bytes, 1u << 20, 2, [&] { frames.push_back(delta); delta = DeltaMsg(); });
  frames.push_back(delta);
  size_t nodes = 0, ended = 0;
  for (const DeltaMsg& d : frames) {
    for (const ThreadDeltaMsg& t : d.threads) {
      nodes += t.nodes.size();
      ended += t.exited ? 1 : 0;
      if (!t.nodes.empty()) {
        EXPECT_EQ(t.tid, 11u);
      }
    }
  }
  EXPECT_EQ(nodes, 4u);  // in batches of 2
  EXPECT_EQ(ended, 2u);
}

// A stand-in aggregator that takes the first `keep` bytes, then hangs up.
class HangingUpAggregator {
 public:
  explicit HangingUpAggregator(const std::string& path) : path_(path) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(listen(fd_, 1), 0);
  }
  ~HangingUpAggregator() { close(fd_); }
  // Accepts, reads what is there, and closes the connection.
  std::string AcceptReadAndHangUp() {
    const int conn = accept(fd_, nullptr, nullptr);
    std::string got;
    char buf[65536];
    const ssize_t n = recv(conn, buf, sizeof buf, 0);
    if (n > 0) got.assign(buf, static_cast<size_t>(n));
    close(conn);
    return got;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

TEST(TransportTest, ASpillThatStartsMidRunHoldsTheSnapshotNotTheCoveredFrames) {
  const std::string dir = TempDir();
  HangingUpAggregator aggregator(dir + "/agg.sock");
  Transport transport;
  transport.Configure(dir + "/agg.sock", dir, 4242);
  int snapshots = 0;
  transport.SetSnapshot([&] {
    ++snapshots;
    return EncodeDeltaFrame(OneThreadDelta(7, 10));  // "everything so far"
  });
  transport.EnsureOpen();
  transport.EnqueueHello(EncodeHelloFrame(TestHello()));
  transport.Enqueue(EncodeDeltaFrame(OneThreadDelta(7, 4)));
  transport.Pump();
  const std::string received = aggregator.AcceptReadAndHangUp();
  // The aggregator got the magic, the Hello and the first delta, sealed.
  std::string error;
  EXPECT_EQ(testing::ParseFrames(received, &error).size(), 2u) << error;

  // It is gone: the next sends fail and the spill starts.
  transport.Enqueue(EncodeDeltaFrame(OneThreadDelta(7, 6)));
  transport.EnqueueGoodbye(EncodeGoodbyeFrame(GoodbyeMsg{1, "exit", 0, ""}));
  for (int i = 0; i < 100 && !transport.spilling(); ++i) {
    transport.Pump();
    usleep(10000);
  }
  ASSERT_TRUE(transport.spilling());
  transport.Close();
  EXPECT_EQ(snapshots, 1);

  const auto messages = testing::ParseFrames(Slurp(dir + "/cilkprof-4242.spill"), &error);
  ASSERT_TRUE(error.empty()) << error;
  // Hello, the snapshot (10 samples: not the 4 and 6 it covers), the Goodbye.
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_TRUE(messages[0].has_hello());
  ASSERT_TRUE(messages[1].has_delta());
  EXPECT_EQ(messages[1].delta().threads(0).counters().samples(), 10u);
  EXPECT_TRUE(messages[2].has_goodbye());
  unlink((dir + "/cilkprof-4242.spill").c_str());
  unlink((dir + "/agg.sock").c_str());
  rmdir(dir.c_str());
}

TEST(TransportTest, ASpillFromTheStartHasNoSnapshotBeforeItsHello) {
  const std::string dir = TempDir();
  Transport transport;
  transport.Configure(dir + "/nobody.sock", dir, 4343);
  transport.SetSnapshot([] { return EncodeDeltaFrame(OneThreadDelta(7, 10)); });
  transport.EnsureOpen();  // fails: the spill starts before any Hello
  ASSERT_TRUE(transport.spilling());
  transport.EnqueueHello(EncodeHelloFrame(TestHello()));
  transport.Enqueue(EncodeDeltaFrame(OneThreadDelta(7, 4)));
  transport.Close();
  std::string error;
  const auto messages = testing::ParseFrames(Slurp(dir + "/cilkprof-4343.spill"), &error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_TRUE(messages[0].has_hello());
  EXPECT_EQ(messages[1].delta().threads(0).counters().samples(), 4u);
  unlink((dir + "/cilkprof-4343.spill").c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace cilkprof::agent
