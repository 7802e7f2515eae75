// The aggregator against an independent oracle: random multi-thread, multi-process
// agent streams (random_agent_streams.h) go through the server the daemon and
// `cilkprof run` use, over its socket, several agents at once; each written profile,
// read back from disk, must hold exactly what the reference merge (reference_merge.h,
// which never uses Session) computed: the same contexts by full address path, the
// same sums, the same thread counters and totals, the exec chain.
#include <gtest/gtest.h>

#include <thread>

#include "cilkprof/aggregator/output_naming.h"
#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/server.h"
#include "fake_agent.h"
#include "random_agent_streams.h"
#include "reference_merge.h"
#include "temp_dir.h"

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders

class MergeOracleTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(MergeOracleTest, WrittenProfilesMatchTheReferenceMerge) {
  RandomStreams streams(GetParam());
  std::vector<RandomProcess> processes;
  const uint32_t count = 2 + GetParam() % 4;
  for (uint32_t k = 0; k < count; ++k) {
    processes.push_back(streams.Process(9000 + 17 * GetParam() + k, /*min_images=*/k == 0 ? 2 : 1));
  }

  TempDir dir;
  AggregatorOptions options;
  options.unix_socket_path = dir.File("agg.sock");
  options.output_path = [&dir](const ProcessKey& key) { return UniqueProfilePath(dir.path(), key); };
  auto started = Aggregator::Start(std::move(options), FakeSymbols());
  ASSERT_TRUE(started.ok()) << started.status().message();
  // The processes at once; a process's images one after the other, as exec makes them.
  std::vector<std::thread> agents;
  for (const RandomProcess& process : processes) {
    agents.emplace_back([&dir, &process] {
      for (size_t i = 0; i < process.images.size(); ++i) {
        ClientSocket agent(dir.File("agg.sock"));
        EXPECT_TRUE(agent.connected());
        EXPECT_TRUE(agent.Send(Frames(process.images[i]), process.send_chunks[i]));
      }
    });
  }
  for (auto& agent : agents) agent.join();
  const std::vector<WrittenProfile> written = (*started)->Finish(std::chrono::milliseconds(60000));
  EXPECT_EQ((*started)->connections_dropped(), 0u);
  ASSERT_EQ(written.size(), processes.size());

  // The generator made lock objects and lock totals (issue 14) for this seed.
  size_t lock_rows = 0;
  for (const RandomProcess& process : processes) lock_rows += process.want.locks.size();
  EXPECT_GT(lock_rows, 0u);

  for (const RandomProcess& process : processes) {
    SCOPED_TRACE("pid " + std::to_string(process.pid));
    const auto w = std::find_if(written.begin(), written.end(),
                                [&](const WrittenProfile& x) { return x.process.pid == process.pid; });
    ASSERT_NE(w, written.end());
    auto read = ReadProfileFile(w->path);
    ASSERT_TRUE(read.ok()) << read.status().message();
    const profile::Profile& p = *read;

    size_t duplicates = 0;
    const ReferenceProfile got = Flatten(p, &duplicates);
    EXPECT_EQ(duplicates, 0u) << "contexts with the same address path were not merged";
    const std::vector<std::string> differences = Differences(got, process.want);
    for (size_t i = 0; i < std::min<size_t>(differences.size(), 10); ++i) ADD_FAILURE() << differences[i];
    EXPECT_EQ(differences.size(), 0u);
    EXPECT_GT(process.want.exclusive.size(), 1u);  // the generator made a tree

    const CounterSums totals = process.want.Totals();
    EXPECT_EQ(p.totals().samples(), totals.samples);
    EXPECT_EQ(p.totals().partial_unwinds(), totals.partial_unwinds);
    EXPECT_EQ(p.totals().dropped_reentrant(), totals.dropped_reentrant);
    EXPECT_EQ(p.totals().dropped_no_memory(), totals.dropped_no_memory);
    EXPECT_EQ(p.totals().idle_samples(), totals.idle_samples);
    EXPECT_EQ(p.totals().idle_ns(), totals.idle_ns);
    EXPECT_EQ(p.totals().overhead_samples(), totals.overhead_samples);
    EXPECT_EQ(p.totals().unattributed_overhead(), totals.unattributed_overhead);
    EXPECT_EQ(p.totals().probe_samples(), totals.probe_samples);
    EXPECT_EQ(p.totals().probe_partial(), totals.probe_partial);
    EXPECT_EQ(p.totals().connections_dropped(), 0u);
    EXPECT_EQ(w->totals.samples(), totals.samples);
    EXPECT_EQ(p.totals().lock_acquisitions(), totals.lock_acquisitions);
    EXPECT_EQ(p.totals().lock_contended(), totals.lock_contended);
    EXPECT_EQ(p.totals().lock_wait_ns(), totals.lock_wait_ns);
    EXPECT_EQ(p.totals().lock_blame_ns(), totals.lock_blame_ns);
    EXPECT_EQ(p.totals().lock_unblamed_ns(), totals.lock_unblamed_ns);
    EXPECT_EQ(p.totals().lock_wait_open_ns(), totals.lock_wait_open_ns);
    // Locks: hottest first, one row per lock, and one location per lock shared with
    // the FRAME_LOCK nodes of the same address.
    std::map<std::pair<uint32_t, uint64_t>, uint32_t> lock_location;
    for (int i = 0; i < p.locks_size(); ++i) {
      if (i > 0) {
        EXPECT_GE(p.locks(i - 1).wait_ns(), p.locks(i).wait_ns());
      }
      const profile::Location& where = p.locations(static_cast<int>(p.locks(i).location()));
      EXPECT_TRUE(lock_location.emplace(std::make_pair(where.module(), where.offset()), p.locks(i).location()).second);
    }
    for (const profile::Node& node : p.nodes()) {
      if (node.kind() != wire::FRAME_LOCK) continue;
      const profile::Location& where = p.locations(static_cast<int>(node.location()));
      auto it = lock_location.find({where.module(), where.offset()});
      if (it != lock_location.end()) {
        EXPECT_EQ(node.location(), it->second);
      }
    }

    // One profile per process: the last image, after the ones it exec'd through.
    EXPECT_EQ(p.process().executable(), process.executables.back());
    std::vector<std::string> chain;
    for (const auto& image : p.process().exec_chain()) chain.push_back(image.executable());
    EXPECT_EQ(chain, std::vector<std::string>(process.executables.begin(), process.executables.end() - 1));
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, MergeOracleTest, ::testing::Range(1u, 13u));

}  // namespace
}  // namespace cilkprof::aggregator
