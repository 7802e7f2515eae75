// `--format speedscope` from a profile's per-thread values (issue 16; profile.proto
// ThreadValues), on the views' SmallProfile with two threads' parts added: one
// profile per entry after the merged one, named by its thread (or "other threads"),
// whose stacks add up to the merged profile's; without per-thread values, the merged
// profile only.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "export/exporters.h"
#include "views_test_profile.h"

namespace cilkprof::cli::exporters {
namespace {

AnalysisInput InputOf(const profile::Profile& profile) {
  AnalysisInput input;
  input.profile = profile;
  input.nodes = views::ProfileNodes::Of(profile);
  input.profile.clear_nodes();
  return input;
}

nlohmann::json Speedscope(const profile::Profile& profile, const std::string& metric) {
  ExportOptions options;
  options.metric = metric;
  std::ostringstream out;
  const Status written = WriteSpeedscope(InputOf(profile), options, out);
  EXPECT_TRUE(written.ok()) << written.message();
  return nlohmann::json::parse(out.str());
}

std::map<std::string, double> Stacks(const nlohmann::json& doc, const nlohmann::json& profile) {
  std::map<std::string, double> out;
  for (size_t i = 0; i < profile["samples"].size(); ++i) {
    std::string path;
    for (const auto& f : profile["samples"][i]) path += (path.empty() ? "" : ";") + doc["shared"]["frames"][f.get<size_t>()]["name"].get<std::string>();
    out[path] += profile["weights"][i].get<double>();
  }
  return out;
}

// Splits every node's values between the two threads of SmallProfile: thread 0 takes
// a third of each node, thread 1 the rest; node 5 (main >spawn> c) is thread 1's alone.
profile::Profile WithThreadValues(const profile::Profile& small, bool group_second) {
  profile::Profile p = small;
  p.mutable_threads(0)->set_thread_index(0);
  p.mutable_threads(1)->set_thread_index(1);
  p.mutable_threads(1)->set_name("worker");
  profile::ThreadValues* first = p.add_thread_values();
  profile::ThreadValues* second = p.add_thread_values();
  first->add_threads(0);
  second->add_threads(1);
  if (group_second) second->add_threads(0);  // a group entry names several threads
  for (int m = 0; m < p.metrics_size(); ++m) {
    profile::ThreadMetricColumn* a = first->add_columns();
    profile::ThreadMetricColumn* b = second->add_columns();
    a->set_metric(static_cast<uint32_t>(m));
    b->set_metric(static_cast<uint32_t>(m));
    uint32_t last_a = 0, last_b = 0;
    for (int n = 0; n < p.nodes_size(); ++n) {
      const double v = m < p.nodes(n).exclusive_size() ? p.nodes(n).exclusive(m) : 0.0;
      if (v == 0) continue;
      const double share = n == 5 ? 0.0 : v / 3;
      if (share != 0) {
        a->add_node_delta(static_cast<uint32_t>(n) - last_a);
        a->add_value(share);
        last_a = static_cast<uint32_t>(n);
      }
      b->add_node_delta(static_cast<uint32_t>(n) - last_b);
      b->add_value(v - share);
      last_b = static_cast<uint32_t>(n);
    }
  }
  return p;
}

TEST(SpeedscopeThreads, OneProfilePerThreadSummingToTheMergedOne) {
  for (const char* metric : {"work", "samples"}) {
    const nlohmann::json doc = Speedscope(WithThreadValues(views::testing::SmallProfile(), false), metric);
    ASSERT_EQ(doc["profiles"].size(), 3u) << metric;
    EXPECT_EQ(doc["profiles"][1]["name"], std::string("thread 0 (tid 42) ") + metric);
    EXPECT_EQ(doc["profiles"][2]["name"], std::string("thread 1 (tid 43, worker) ") + metric);
    const auto merged = Stacks(doc, doc["profiles"][0]);
    std::map<std::string, double> summed;
    for (size_t t = 1; t < doc["profiles"].size(); ++t) {
      double total = 0;
      for (const auto& [stack, weight] : Stacks(doc, doc["profiles"][t])) {
        summed[stack] += weight;
        total += weight;
      }
      EXPECT_NEAR(doc["profiles"][t]["endValue"].get<double>(), total, 1e-6);
    }
    ASSERT_EQ(summed.size(), merged.size()) << metric;
    for (const auto& [stack, weight] : merged) EXPECT_NEAR(summed[stack], weight, 1e-6) << stack;
    // The spawned c is the worker's alone.
    EXPECT_EQ(Stacks(doc, doc["profiles"][1]).count("main;[spawn];c"), 0u);
  }
}

TEST(SpeedscopeThreads, AGroupEntryIsOtherThreads) {
  const nlohmann::json doc = Speedscope(WithThreadValues(views::testing::SmallProfile(), true), "work");
  ASSERT_EQ(doc["profiles"].size(), 3u);
  EXPECT_EQ(doc["profiles"][2]["name"], "other threads (2) work");
}

TEST(SpeedscopeThreads, ProfilesWithoutPerThreadValuesHaveTheMergedOneOnly) {
  const nlohmann::json doc = Speedscope(views::testing::SmallProfile(), "work");
  ASSERT_EQ(doc["profiles"].size(), 1u);
  EXPECT_EQ(doc["profiles"][0]["name"], "all threads (work)");
}

}  // namespace
}  // namespace cilkprof::cli::exporters
