// Continuous mode (issue 15, cilkprofd --window): Session::TakeWindow and the server's
// CutWindow. Windows are cut by explicit calls, never by time: what a client sent
// before CutWindow is in the socket, and the cut merges it first.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cilkprof/aggregator/output_naming.h"
#include "cilkprof/aggregator/profile_io.h"
#include "profile_paths.h"
#include "server_fixture.h"

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders
using std::chrono::milliseconds;

constexpr milliseconds kDrain{60000};  // never expires in a passing test
constexpr uint64_t kSecond = 1000000000;

using Paths = std::map<std::string, std::vector<double>>;

void AddPaths(const Paths& in, Paths* sum) {
  for (const auto& [path, values] : in) {
    std::vector<double>& out = (*sum)[path];
    if (out.size() < values.size()) out.resize(values.size(), 0.0);
    for (size_t i = 0; i < values.size(); ++i) out[i] += values[i];
  }
}

// Paths with a value: a whole-process profile also lists nodes that only lead to others.
Paths NonZero(const Paths& paths) {
  Paths out;
  for (const auto& [path, values] : paths) {
    std::vector<double> v = values;
    while (!v.empty() && v.back() == 0.0) v.pop_back();
    if (!v.empty()) out[path] = v;
  }
  return out;
}

profile::Profile Build(const Session& session, uint64_t end = 0) {
  FakeSymbolSource symbols;
  return session.BuildProfile(symbols, end);
}

profile::Profile Read(const WrittenProfile& w) {
  auto read = ReadProfileFile(w.path);
  EXPECT_TRUE(read.ok()) << w.path << ": " << read.status().message();
  return read.ok() ? *read : profile::Profile();
}

// A Delta of one thread that declares node `id` under `parent` (0: the root, or a node
// an earlier Delta declared) and gives it `samples`.
wire::AgentMessage OneSampleDelta(uint32_t id, uint32_t parent, double samples, bool declare = true,
                                  uint64_t lock_wait_ns = 0) {
  wire::AgentMessage m;
  wire::Delta* d = m.mutable_delta();
  if (declare && parent == 0) AddModule(d, 1, "/opt/bin/service", "b1");
  wire::ThreadDelta* t = AddThread(d, 7000, 0, "main");
  if (declare) AddNode(t, id, parent, 1, 0x100 * id);
  AddMetrics(t, id, {samples, samples * 1000});
  AddCounters(t, static_cast<uint64_t>(samples), 0, static_cast<uint64_t>(samples) * 1000000);
  if (lock_wait_ns != 0) AddLock(d, 1, 0x9000, lock_wait_ns);
  return m;
}

TEST(SessionWindowTest, WindowsHoldTheirOwnDeltasAndSumToTheWhole) {
  const auto stream = SyntheticAgentStream(4242, 77, /*deltas=*/8);
  Session whole, windowed;
  windowed.set_window_start(100 * kSecond);
  std::vector<profile::Profile> windows;
  // Hello and deltas 1-3, 4-5, then 6-8 and the Goodbye: later deltas add to nodes the
  // earlier windows declared.
  for (size_t i = 0; i < stream.size(); ++i) {
    ASSERT_TRUE(whole.Apply(stream[i]).ok());
    ASSERT_TRUE(windowed.Apply(stream[i]).ok()) << "message " << i;
    if (i == 3 || i == 5) {
      const uint64_t end = (i == 3 ? 160 : 220) * kSecond;
      windows.push_back(Build(*windowed.TakeWindow(end, /*last=*/false)));
      EXPECT_EQ(windowed.window_start_unix_ns(), end);
    }
  }
  auto last = windowed.TakeWindow(300 * kSecond, /*last=*/true);
  EXPECT_EQ(last->earlier_windows(), 2u);
  windows.push_back(Build(*last, 300 * kSecond));
  ASSERT_EQ(windows.size(), 3u);

  const profile::Profile all = Build(whole);
  Paths sum;
  uint64_t samples = 0;
  for (const profile::Profile& w : windows) {
    EXPECT_GT(w.totals().samples(), 0u);
    EXPECT_LT(w.totals().samples(), all.totals().samples()) << "a window holds only its own deltas";
    AddPaths(PathsOf(w), &sum);
    samples += w.totals().samples();
  }
  EXPECT_EQ(NonZero(sum), NonZero(PathsOf(all)));
  EXPECT_EQ(samples, all.totals().samples());

  EXPECT_EQ(windows[0].process().window_start_unix_ns(), 100 * kSecond);
  EXPECT_EQ(windows[0].process().window_end_unix_ns(), 160 * kSecond);
  EXPECT_EQ(windows[0].process().end_reason(), "window");
  EXPECT_EQ(windows[0].process().end_unix_ns(), 160 * kSecond);
  EXPECT_EQ(windows[0].process().start_unix_ns(), 100 * kSecond) << "the later of the process's start and the window's";
  EXPECT_EQ(windows[1].process().window_start_unix_ns(), 160 * kSecond);
  EXPECT_EQ(windows[2].process().window_start_unix_ns(), 220 * kSecond);
  EXPECT_EQ(windows[2].process().end_reason(), "exit") << "the last window ends as the process did";
  EXPECT_EQ(all.process().window_start_unix_ns(), 0u) << "a whole process has no window";
}

TEST(SessionWindowTest, AnEmptyWindowRecordsNothingAndDeclarationsSurvive) {
  Session session;
  session.set_window_start(kSecond);
  ASSERT_TRUE(session.Apply(Hello(9)).ok());
  ASSERT_TRUE(session.Apply(OneSampleDelta(1, 0, 3, true, 500)).ok());
  auto first = session.TakeWindow(2 * kSecond, false);
  EXPECT_FALSE(first->RecordedNothing());
  ASSERT_EQ(Build(*first).locks_size(), 1);
  EXPECT_EQ(Build(*first).locks(0).wait_ns(), 500u);
  EXPECT_TRUE(session.TakeWindow(3 * kSecond, false)->RecordedNothing());
  // Node 1 was declared two windows ago: a Delta may still refer to it and add a child.
  ASSERT_TRUE(session.Apply(OneSampleDelta(1, 0, 2, /*declare=*/false)).ok());
  ASSERT_TRUE(session.Apply(OneSampleDelta(2, 1, 5)).ok());
  auto third = session.TakeWindow(4 * kSecond, false);
  const profile::Profile p = Build(*third);
  EXPECT_EQ(p.totals().samples(), 7u);
  EXPECT_EQ(p.locks_size(), 0) << "lock totals are the window's";
  EXPECT_EQ(p.threads_size(), 1);
  EXPECT_EQ(third->earlier_windows(), 1u) << "the empty window does not count";
}

class WindowServerTest : public ServerFixture {
 protected:
  AggregatorOptions WindowOptions(uint32_t keep = 0) {
    AggregatorOptions options = Options();
    options.window = std::chrono::seconds(60);
    options.keep_windows = keep;
    return options;
  }
  // Boundaries in the future of every window the aggregator started with.
  uint64_t Boundary(int n) const { return first_boundary_ + static_cast<uint64_t>(n) * 60 * kSecond; }

  std::vector<std::string> ProfileFiles() const {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
      if (entry.path().extension() == ".cilkprof") files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
  }

  const uint64_t first_boundary_ =
      (static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count()) /
           (60 * kSecond) +
       1) *
      60 * kSecond;
};

TEST_F(WindowServerTest, TwoWindowsThenTheLastPartialOneSumToTheWhole) {
  auto server = Start(WindowOptions());
  ASSERT_TRUE(server);
  const auto stream = SyntheticAgentStream(5151, 3, /*deltas=*/6);
  ClientSocket agent(socket_path_);
  ASSERT_TRUE(agent.connected());
  ASSERT_TRUE(agent.Send(Frames({stream.begin(), stream.begin() + 3}), 5));
  const auto first = server->CutWindow(Boundary(0));
  ASSERT_TRUE(agent.Send(FrameBytes({stream.begin() + 3, stream.begin() + 5})));
  const auto second = server->CutWindow(Boundary(1));
  ASSERT_TRUE(agent.Send(FrameBytes({stream.begin() + 5, stream.end()})));  // and the Goodbye
  agent.Close();  // ends mid-window
  const auto all = server->Finish(kDrain);

  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  ASSERT_EQ(all.size(), 3u) << "two cuts and the last window";
  EXPECT_EQ(all[0].path, first[0].path);
  EXPECT_EQ(first[0].process.window_end_unix_ns, Boundary(0));
  EXPECT_EQ(second[0].process.window_start_unix_ns, Boundary(0));
  EXPECT_EQ(all[2].process.window_start_unix_ns, Boundary(1));
  EXPECT_EQ(first[0].path, dir_.File("synthetic.5151." + UtcTimestamp(first[0].process.window_start_unix_ns) +
                                     ".cilkprof"));
  // Named by its window's start; ".1" when the first window's (the process's start,
  // floored to the second) fell in that same second, as it does when the test runs just
  // before a boundary.
  const std::string second_stem = dir_.File("synthetic.5151." + UtcTimestamp(Boundary(0)));
  EXPECT_TRUE(second[0].path == second_stem + ".cilkprof" || second[0].path == second_stem + ".1.cilkprof")
      << second[0].path;

  const profile::Profile whole = ExpectedProfile(stream);
  Paths sum;
  uint64_t samples = 0;
  for (const WrittenProfile& w : all) {
    ASSERT_TRUE(w.status.ok()) << w.status.message();
    const profile::Profile p = Read(w);
    EXPECT_EQ(p.process().pid(), 5151u);
    EXPECT_GT(p.totals().samples(), 0u);
    AddPaths(PathsOf(p), &sum);
    samples += p.totals().samples();
  }
  EXPECT_EQ(NonZero(sum), NonZero(PathsOf(whole)));
  EXPECT_EQ(samples, whole.totals().samples());
  EXPECT_EQ(Read(all[0]).process().end_reason(), "window");
  EXPECT_EQ(Read(all[2]).process().end_reason(), "exit");
  EXPECT_EQ(ProfileFiles().size(), 3u);
}

TEST_F(WindowServerTest, AnEmptyWindowWritesNothing) {
  auto server = Start(WindowOptions());
  ASSERT_TRUE(server);
  ClientSocket agent(socket_path_);
  ASSERT_TRUE(agent.Send(Frames({Hello(61), OneSampleDelta(1, 0, 4)})));
  EXPECT_EQ(server->CutWindow(Boundary(0)).size(), 1u);
  EXPECT_TRUE(server->CutWindow(Boundary(1)).empty()) << "nothing recorded in that window";
  ClientSocket idle(socket_path_);  // connected, said Hello, recorded nothing
  ASSERT_TRUE(idle.Send(Frames({Hello(62)})));
  EXPECT_TRUE(server->CutWindow(Boundary(2)).empty());
  ASSERT_TRUE(agent.Send(FrameBytes({Goodbye()})));
  agent.Close();
  idle.Close();
  const auto all = server->Finish(kDrain);
  // pid 61's last window adds nothing to its first; pid 62 never recorded anything and
  // is written once, at its end, as without windows.
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].process.pid, 61u);
  EXPECT_EQ(all[1].process.pid, 62u);
  EXPECT_EQ(ProfileFiles().size(), 2u);
}

TEST_F(WindowServerTest, RotationKeepsTheNewestWindowsOfEachProcess) {
  auto server = Start(WindowOptions(/*keep=*/2));
  ASSERT_TRUE(server);
  ClientSocket agent(socket_path_);
  ClientSocket other(socket_path_);
  ASSERT_TRUE(agent.Send(Frames({Hello(71, "/srv/a")})));
  ASSERT_TRUE(other.Send(Frames({Hello(72, "/srv/b")})));
  std::vector<std::string> newest;
  for (int w = 0; w < 5; ++w) {
    ASSERT_TRUE(agent.Send(FrameBytes({OneSampleDelta(1, 0, 1 + w, /*declare=*/w == 0)})));
    if (w == 0) {
      ASSERT_TRUE(other.Send(FrameBytes({OneSampleDelta(1, 0, 9)})));
    }
    const auto written = server->CutWindow(Boundary(w));
    ASSERT_EQ(written.size(), w == 0 ? 2u : 1u);
    for (const auto& p : written) {
      if (p.process.pid == 71) newest.push_back(p.path);
    }
    EXPECT_LE(ProfileFiles().size(), 3u) << "two of pid 71, one of pid 72";
  }
  const std::vector<std::string> kept{newest[3], newest[4]};
  std::vector<std::string> files = ProfileFiles();
  EXPECT_EQ(files.size(), 3u);
  for (const std::string& path : kept) {
    EXPECT_TRUE(std::filesystem::exists(path)) << path;
    EXPECT_EQ(Read([&path] { WrittenProfile w; w.path = path; return w; }()).totals().samples(), path == kept[0] ? 4u : 5u);
  }
  EXPECT_FALSE(std::filesystem::exists(newest[0]));
  agent.Close();
  other.Close();
  server->Finish(kDrain);
  EXPECT_EQ(ProfileFiles().size(), 3u) << "the last windows recorded nothing new";
}

TEST_F(WindowServerTest, SeveralProcessesAtOnceEachGetTheirOwnWindows) {
  auto server = Start(WindowOptions());
  ASSERT_TRUE(server);
  ClientSocket a(socket_path_), b(socket_path_), c(socket_path_);
  ASSERT_TRUE(a.Send(Frames({Hello(81, "/srv/a"), OneSampleDelta(1, 0, 2)})));
  ASSERT_TRUE(b.Send(Frames({Hello(82, "/srv/b"), OneSampleDelta(1, 0, 3)})));
  ASSERT_TRUE(c.Send(Frames({Hello(83, "/srv/c"), OneSampleDelta(1, 0, 4)})));
  auto written = server->CutWindow(Boundary(0));
  ASSERT_EQ(written.size(), 3u);
  std::map<uint32_t, uint64_t> samples;
  for (const auto& w : written) samples[w.process.pid] = Read(w).totals().samples();
  EXPECT_EQ(samples, (std::map<uint32_t, uint64_t>{{81, 2}, {82, 3}, {83, 4}}));
  ASSERT_TRUE(b.Send(FrameBytes({OneSampleDelta(1, 0, 6, false)})));
  written = server->CutWindow(Boundary(1));
  ASSERT_EQ(written.size(), 1u) << "only pid 82 recorded something";
  EXPECT_EQ(written[0].process.pid, 82u);
  EXPECT_EQ(Read(written[0]).totals().samples(), 6u);
  a.Close();
  b.Close();
  c.Close();
  server->Finish(kDrain);
}

// `cilkprof attach` connects to the daemon itself and hands the connection to the
// target's agent: the peer (SO_PEERCRED) is the CLI, the Hello names the target. Here
// the test process connects and speaks for two other pids.
TEST_F(WindowServerTest, AHandedOverConnectionIsProfiledAsTheHellosProcess) {
  AggregatorOptions options = WindowOptions();
  options.max_connections_per_client = 2;  // counts who connected: this process
  auto server = Start(std::move(options));
  ASSERT_TRUE(server);
  const uint32_t target = static_cast<uint32_t>(::getpid()) + 100000;
  ClientSocket first(socket_path_), second(socket_path_);
  ASSERT_TRUE(first.Send(Frames({Hello(target, "/srv/service"), OneSampleDelta(1, 0, 2)})));
  ASSERT_TRUE(second.Send(Frames({Hello(target + 1, "/srv/other"), OneSampleDelta(1, 0, 3)})));
  const auto written = server->CutWindow(Boundary(0));
  ASSERT_EQ(written.size(), 2u);
  for (const auto& w : written) {
    const uint32_t pid = w.process.pid;
    ASSERT_TRUE(pid == target || pid == target + 1) << pid;
    const profile::Profile p = Read(w);
    EXPECT_EQ(p.process().pid(), pid);
    EXPECT_EQ(p.process().executable(), pid == target ? "/srv/service" : "/srv/other");
    EXPECT_EQ(w.path, dir_.File((pid == target ? "service." : "other.") + std::to_string(pid) + "." +
                                UtcTimestamp(w.process.window_start_unix_ns) + ".cilkprof"));
    EXPECT_EQ(p.totals().samples(), pid == target ? 2u : 3u) << "not merged into one process";
  }
  {
    ClientSocket third(socket_path_);  // over this client's limit: refused, not mislabelled
    third.Send(Frames({Hello(target + 2)}));
    // The cut accepts the waiting connections first: the third is refused while the
    // other two are open.
    EXPECT_TRUE(server->CutWindow(Boundary(1)).empty());
  }
  ASSERT_TRUE(first.Send(FrameBytes({Goodbye("detach")})));
  first.Close();
  second.Close();
  const auto all = server->Finish(kDrain);
  EXPECT_EQ(server->stats().refused_connection_limit, 1u);
  for (const auto& w : all) EXPECT_NE(w.process.pid, target + 2);
  for (const auto& w : all) EXPECT_NE(w.process.pid, static_cast<uint32_t>(::getpid()));
}

TEST_F(WindowServerTest, WithoutWindowsCutWindowDoesNothing) {
  auto server = Start(Options());
  ASSERT_TRUE(server);
  ClientSocket agent(socket_path_);
  ASSERT_TRUE(agent.Send(Frames({Hello(91), OneSampleDelta(1, 0, 4)})));
  EXPECT_TRUE(server->CutWindow(Boundary(0)).empty());
  ASSERT_TRUE(agent.Send(FrameBytes({OneSampleDelta(2, 1, 1), Goodbye()})));
  agent.Close();
  const auto all = server->Finish(kDrain);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].path, dir_.File("fake.91.cilkprof"));
  const profile::Profile p = Read(all[0]);
  EXPECT_EQ(p.totals().samples(), 5u);
  EXPECT_EQ(p.process().window_start_unix_ns(), 0u);
}

}  // namespace
}  // namespace cilkprof::aggregator
