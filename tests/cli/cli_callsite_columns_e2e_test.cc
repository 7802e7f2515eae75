// End to end: examples/serial_bottleneck profiled by cilkprof-run with the real agent
// (work/span on by default, TSC clock), then `cilkprof view top-down --format json`:
// the call-site columns must be on the rows of bar and count_primes, and bar's must
// show the lower parallelism and most of the critical path. Structure only: the
// figures are timings.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "run_tool.h"

using cilkprof::cli::testing::RunTool;
using cilkprof::cli::testing::TempDir;
using cilkprof::cli::testing::ToolResult;
using Json = nlohmann::json;

namespace {

// Every node of the tree with a `callsite` object, depth first.
void RowsWithSites(const Json& node, std::vector<const Json*>* out) {
  if (node.contains("callsite")) out->push_back(&node);
  for (const Json& child : node["children"]) RowsWithSites(child, out);
}

TEST(CallSiteColumnsEndToEnd, SerialBottleneckShowsBarAsTheBottleneck) {
  TempDir dir;
  const std::string profile = dir.File("sb.cilkprof");
  const ToolResult run = RunTool({CILKPROF_TEST_CILKPROF_RUN, "-q", "-o", profile, "--", CILKPROF_TEST_SERIAL_BOTTLENECK,
                                  "400000", "40000000", "4000000"},
                                 "", {std::string("CILKPROF_AGENT=") + CILKPROF_TEST_AGENT, "CILK_NWORKERS=2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;

  const ToolResult view = RunTool({CILKPROF_TEST_CILKPROF, "view", "top-down", "--format", "json", profile});
  ASSERT_EQ(view.exit_code, 0) << view.err;
  const Json tree = Json::parse(view.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(tree.is_discarded()) << view.out;
  std::vector<const Json*> rows;
  RowsWithSites(tree, &rows);
  ASSERT_FALSE(rows.empty()) << view.out;

  const Json* bar = nullptr;
  std::vector<const Json*> count_primes;
  for (const Json* row : rows) {
    const std::string name = (*row)["name"];
    const Json& site = (*row)["callsite"];
    for (const char* key : {"work_instr", "span", "parallelism", "span_percent", "count", "unit"}) {
      ASSERT_TRUE(site.contains(key)) << key << " in " << site.dump();
    }
    EXPECT_EQ(site["unit"], "ns");
    EXPECT_GE(site["count"].get<uint64_t>(), 1u);
    // bar itself, not the lambda it spawns.
    if (name.find("bar") != std::string::npos && name.find("operator") == std::string::npos &&
        (*row)["edge"] == "call") {
      EXPECT_EQ(bar, nullptr) << "two rows of bar carry sites";
      bar = row;
    }
    if (name.find("count_primes") != std::string::npos) count_primes.push_back(row);
  }
  ASSERT_NE(bar, nullptr) << view.out;
  ASSERT_FALSE(count_primes.empty()) << view.out;
  const Json& bar_site = (*bar)["callsite"];
  ASSERT_TRUE(bar_site["parallelism"].is_number()) << bar_site.dump();
  EXPECT_GE(bar_site["span_percent"].get<double>(), 50.0) << bar_site.dump();
  for (const Json* row : count_primes) {
    const Json& site = (*row)["callsite"];
    ASSERT_TRUE(site["parallelism"].is_number()) << site.dump();
    EXPECT_LT(bar_site["parallelism"].get<double>(), site["parallelism"].get<double>()) << site.dump();
  }

  // The text view has the four columns; CSV appends them.
  const ToolResult text = RunTool({CILKPROF_TEST_CILKPROF, "view", "top-down", profile});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Work(instr) (ms)  Span (ms)  Parallelism  Span %  Function"), std::string::npos)
      << text.out.substr(0, 600);
  const ToolResult csv = RunTool({CILKPROF_TEST_CILKPROF, "view", "flat", "--format", "csv", profile});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const std::string header = csv.out.substr(0, csv.out.find('\n'));
  EXPECT_EQ(header.substr(header.size() - std::string(",work_instr,span,parallelism,span_percent").size()),
            ",work_instr,span,parallelism,span_percent");
}

}  // namespace
