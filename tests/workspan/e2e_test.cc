// End to end: programs on the Cilk runtime profiled by cilkprof-run with the real
// agent (work/span on by default), then read back with `cilkprof view callsites`,
// `summary`, `summary --what-if` and `export --format cilkscale-csv`. Under the
// counter clock the figures must equal the independent reference (sp_program.h)
// exactly; serial_bottleneck must rank bar as the scalability bottleneck.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "run_tool.h"
#include "sp_program.h"

using cilkprof::cli::testing::RunTool;
using cilkprof::cli::testing::TempDir;
using cilkprof::cli::testing::ToolResult;
using Json = nlohmann::json;

namespace {

const std::vector<int> kFactors = {2, 4, 8, 16, 32};

// cilkprof-run PROGRAM ARGS with the counter clock; returns the profile's path.
std::string Profile(const TempDir& dir, const std::vector<std::string>& program, const std::string& workers,
                    const std::vector<std::string>& extra_env = {}, const std::vector<std::string>& options = {}) {
  std::vector<std::string> argv = {CILKPROF_TEST_CILKPROF_RUN, "-q", "-o", dir.File("p.cilkprof")};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  std::vector<std::string> env = {std::string("CILKPROF_AGENT=") + CILKPROF_TEST_AGENT, "CILK_NWORKERS=" + workers};
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  const ToolResult r = RunTool(argv, "", env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return dir.File("p.cilkprof");
}

Json JsonOf(const std::vector<std::string>& argv) {
  const ToolResult r = RunTool(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

class WorkSpanEndToEnd : public ::testing::TestWithParam<std::string> {};

TEST_P(WorkSpanEndToEnd, FibIsExactThroughTheWholePipeline) {
  TempDir dir;
  const uint64_t burden = 11;
  const std::string profile = Profile(dir, {CILKPROF_TEST_PROGRAM, "fib", "15"}, GetParam(),
                                      {"CILKPROF_WS_CLOCK=counter", "CILKPROF_BURDEN=11"});
  const workspan_test::Expected e =
      workspan_test::Reference(workspan_test::AsInterpreted(workspan_test::FibProgram(15)), burden, 0, kFactors);

  const Json summary = JsonOf({CILKPROF_TEST_CILKPROF, "summary", "--format", "json", profile});
  ASSERT_TRUE(summary.is_object());
  EXPECT_EQ(summary["work"].get<double>(), static_cast<double>(e.work));
  EXPECT_EQ(summary["span"].get<double>(), static_cast<double>(e.span));
  EXPECT_EQ(summary["burdened_span"].get<double>(), static_cast<double>(e.burdened_span));
  EXPECT_EQ(summary["spawns"].get<uint64_t>(), e.spawns);
  EXPECT_EQ(summary["syncs"].get<uint64_t>(), e.syncs);
  EXPECT_DOUBLE_EQ(summary["parallelism"].get<double>(), static_cast<double>(e.work) / e.span);
  EXPECT_DOUBLE_EQ(summary["average_maximal_strand"].get<double>(),
                   static_cast<double>(e.work) / (1.0 + 2.0 * e.spawns + e.syncs));
  ASSERT_EQ(summary["speedup"].size(), 9u);
  EXPECT_EQ(summary["speedup"][3]["p"].get<int>(), 8);
  const double T1 = static_cast<double>(e.work), bspan = static_cast<double>(e.burdened_span);
  EXPECT_DOUBLE_EQ(summary["speedup"][3]["lower"].get<double>(), T1 / (T1 / 8 + 1.7 * (1 - 1.0 / 8) * bspan));
  EXPECT_DOUBLE_EQ(summary["speedup"][3]["upper"].get<double>(), std::min(8.0, T1 / e.span));

  // The call sites: the top-level call (in RunOnRuntime), the interpreter's one call
  // instruction of a template (in ExecBody: fib(n - 1) inside the spawned child and
  // fib(n - 2)), fib's spawn.
  const Json sites = JsonOf({CILKPROF_TEST_CILKPROF, "view", "callsites", "--format", "json", profile});
  ASSERT_TRUE(sites.is_array());
  ASSERT_EQ(sites.size(), e.sites.size());
  for (const Json& row : sites) {
    ASSERT_EQ(row.size(), 11u);
    for (const char* key : {"caller", "callee", "file", "line", "kind", "count", "work_on_work", "span_on_work",
                            "work_on_span", "span_on_span", "parallelism"}) {
      EXPECT_TRUE(row.contains(key)) << key;
    }
    const std::string kind = row["kind"], caller = row["caller"], callee = row["callee"];
    workspan_test::SiteKey key;
    if (kind == "spawn") {
      key = {1, 0x2000, 0};
      EXPECT_NE(caller.find("ExecBody"), std::string::npos) << caller;
      // The spawned lambda calls no template itself (RunChild, then ExecBody, does):
      // the callee shown is the callable.
      EXPECT_NE(callee.find("ExecBody"), std::string::npos) << callee;
      EXPECT_NE(callee.find("lambda"), std::string::npos) << callee;
    } else {
      EXPECT_NE(callee.find("CallTemplate"), std::string::npos) << callee;
    }
    if (kind == "spawn") {
    } else if (caller.find("RunOnRuntime") != std::string::npos) {
      key = {0, 0x100, 0};
    } else {
      EXPECT_NE(caller.find("ExecBody"), std::string::npos) << caller;
      key = {0, 0x500000, 0};
    }
    ASSERT_EQ(e.sites.count(key), 1u) << kind << " " << caller;
    const workspan_test::SiteExpect& x = e.sites.at(key);
    EXPECT_EQ(row["count"].get<uint64_t>(), x.count) << caller;
    EXPECT_EQ(row["work_on_work"].get<double>(), static_cast<double>(x.work_on_work)) << caller;
    EXPECT_EQ(row["span_on_work"].get<double>(), static_cast<double>(x.span_on_work)) << caller;
    EXPECT_EQ(row["work_on_span"].get<double>(), static_cast<double>(x.work_on_span)) << caller;
    EXPECT_EQ(row["span_on_span"].get<double>(), static_cast<double>(x.span_on_span)) << caller;
    EXPECT_NE(row["file"].get<std::string>().find("sp_program.cc"), std::string::npos);
  }

  // Cilkscale's CSV: header, one row per site, the whole program last.
  const ToolResult csv = RunTool({CILKPROF_TEST_CILKPROF, "export", "--format", "cilkscale-csv", profile});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("tag,work (u),span (u),parallelism,burdened_span (u),burdened_parallelism\n", 0), 0u);
  const std::string last = csv.out.substr(csv.out.rfind('\n', csv.out.size() - 2) + 1);
  EXPECT_EQ(last.rfind("," + std::to_string(e.work) + "," + std::to_string(e.span) + ",", 0), 0u) << last;
}

TEST_P(WorkSpanEndToEnd, RandomProgramWithRegionsIsExact) {
  int with_regions = 0;
  for (int seed : {3, 17}) {
    TempDir dir;
    const std::string profile = Profile(dir, {CILKPROF_TEST_PROGRAM, "random", std::to_string(seed)}, GetParam(),
                                        {"CILKPROF_WS_CLOCK=counter", "CILKPROF_BURDEN=5"});
    const workspan_test::Expected e =
        workspan_test::Reference(workspan_test::RandomProgram(static_cast<uint64_t>(seed)), 5, 3, kFactors);
    const Json summary = JsonOf({CILKPROF_TEST_CILKPROF, "summary", "--format", "json", profile});
    EXPECT_EQ(summary["work"].get<double>(), static_cast<double>(e.work)) << seed;
    EXPECT_EQ(summary["span"].get<double>(), static_cast<double>(e.span)) << seed;
    EXPECT_EQ(summary["burdened_span"].get<double>(), static_cast<double>(e.burdened_span)) << seed;
    const ToolResult what_if = RunTool({CILKPROF_TEST_CILKPROF, "summary", "--what-if", "--format", "json", profile});
    if (what_if.exit_code != 0) {
      EXPECT_NE(what_if.err.find("no annotated regions"), std::string::npos) << what_if.err;
      continue;
    }
    const Json w = Json::parse(what_if.out);
    ++with_regions;
    ASSERT_EQ(w["factors"].size(), kFactors.size());
    for (const Json& set : w["what_if"]) {
      int reference_set = 0;
      if (!set["region"].is_null()) reference_set = 1 + std::stoi(set["region"].get<std::string>().substr(1));
      for (size_t f = 0; f < kFactors.size(); ++f) {
        EXPECT_DOUBLE_EQ(set["parallelism"][f].get<double>(),
                         static_cast<double>(e.work) / e.whatif[static_cast<size_t>(reference_set)][f])
            << "seed " << seed << " set " << reference_set << " factor " << kFactors[f];
      }
    }
  }
  EXPECT_GT(with_regions, 0);  // the seeds are chosen to have regions
}

// --strands: the strand table through the whole pipeline. The strands partition the
// work and the critical path exactly (counter clock), and the call-site figures are
// the same as without strands.
TEST_P(WorkSpanEndToEnd, StrandsAddUpToWorkAndSpan) {
  TempDir dir;
  const std::string profile = Profile(dir, {CILKPROF_TEST_PROGRAM, "fib", "12"}, GetParam(),
                                      {"CILKPROF_WS_CLOCK=counter", "CILKPROF_BURDEN=0"}, {"--strands"});
  const workspan_test::Expected e = workspan_test::Reference(workspan_test::FibProgram(12), 0, 0, kFactors);
  const Json summary = JsonOf({CILKPROF_TEST_CILKPROF, "summary", "--format", "json", profile});
  ASSERT_TRUE(summary.is_object());
  EXPECT_EQ(summary["work"].get<double>(), static_cast<double>(e.work));
  EXPECT_EQ(summary["span"].get<double>(), static_cast<double>(e.span));
  const Json strands = JsonOf({CILKPROF_TEST_CILKPROF, "view", "strands", "--format", "json", profile});
  ASSERT_TRUE(strands.is_array());
  ASSERT_FALSE(strands.empty());
  double work = 0, span = 0;
  for (const Json& s : strands) {
    work += s["work_on_work"].get<double>();
    span += s["span_on_span"].get<double>();
    EXPECT_EQ(s["work_on_work"], s["span_on_work"]);
    EXPECT_GT(s["count"].get<uint64_t>(), 0u);
    EXPECT_NE(s["start_point"].get<std::string>(), "?");
    EXPECT_NE(s["end_point"].get<std::string>(), "?");
  }
  EXPECT_EQ(work, static_cast<double>(e.work));
  EXPECT_EQ(span, static_cast<double>(e.span));
  // Call sites are unchanged by the strand table sharing their ids and profiles.
  const Json sites = JsonOf({CILKPROF_TEST_CILKPROF, "view", "callsites", "--format", "json", profile});
  ASSERT_TRUE(sites.is_array());
  for (const Json& site : sites) EXPECT_NE(site["kind"].get<std::string>(), "strand");
  const ToolResult bad_sort = RunTool({CILKPROF_TEST_CILKPROF, "view", "strands", "--sort", "nope", profile});
  EXPECT_EQ(bad_sort.exit_code, 2);
  EXPECT_NE(bad_sort.err.find("unknown --sort column"), std::string::npos) << bad_sort.err;
}

INSTANTIATE_TEST_SUITE_P(Workers, WorkSpanEndToEnd, ::testing::Values("1", "2"),
                         [](const auto& info) { return "workers_" + info.param; });

TEST(WorkSpanEndToEndOptions, NoWorkspanTurnsTheInstrumentationOff) {
  TempDir dir;
  const std::string profile = Profile(dir, {CILKPROF_TEST_PROGRAM, "fib", "10"}, "2", {}, {"--no-workspan"});
  const ToolResult view = RunTool({CILKPROF_TEST_CILKPROF, "view", "callsites", profile});
  EXPECT_EQ(view.exit_code, 1);
  EXPECT_NE(view.err.find("has no work/span data"), std::string::npos) << view.err;
  const Json summary = JsonOf({CILKPROF_TEST_CILKPROF, "summary", "--format", "json", profile});
  EXPECT_FALSE(summary.contains("span"));
  const ToolResult strands = RunTool({CILKPROF_TEST_CILKPROF, "view", "strands", profile});
  EXPECT_EQ(strands.exit_code, 1);
  EXPECT_NE(strands.err.find("--strands"), std::string::npos) << strands.err;
}

TEST(WorkSpanEndToEndOptions, WithoutStrandsTheStrandViewSaysHowToGetThem) {
  TempDir dir;
  const std::string profile = Profile(dir, {CILKPROF_TEST_PROGRAM, "fib", "10"}, "1");
  const ToolResult view = RunTool({CILKPROF_TEST_CILKPROF, "view", "strands", profile});
  EXPECT_EQ(view.exit_code, 1);
  EXPECT_NE(view.err.find("has no strand data; record it with `cilkprof run --strands`"), std::string::npos)
      << view.err;
  const ToolResult both = RunTool({CILKPROF_TEST_CILKPROF_RUN, "--strands", "--no-workspan", "--", "true"});
  EXPECT_EQ(both.exit_code, 2) << both.err;
}

// The thesis' Figure 1-1: bar has the lowest parallelism and the largest share of
// the critical path among foo (count_primes), bar and baz.
TEST(WorkSpanEndToEndExamples, SerialBottleneckRanksBar) {
  TempDir dir;
  const std::string profile =
      Profile(dir, {CILKPROF_TEST_SERIAL_BOTTLENECK, "400000", "40000000", "4000000"}, "2");
  const Json sites = JsonOf({CILKPROF_TEST_CILKPROF, "view", "callsites", "--format", "json", profile});
  ASSERT_TRUE(sites.is_array());
  const Json* bar = nullptr;
  const Json* foo = nullptr;
  const Json* baz = nullptr;
  for (const Json& row : sites) {
    const std::string callee = row["callee"], kind = row["kind"], caller = row["caller"];
    // Call sites are call instructions: main's call of bar (bar holds a scope); main's
    // spawn of foo (foo itself has no scope, so in scope mode the spawn row is foo's);
    // baz's call of cilk::run (its parallel_for; baz itself has no scope).
    if (kind == "call" && callee.find("bar") != std::string::npos && callee.find("lambda") == std::string::npos) bar = &row;
    if (kind == "spawn" && caller.find("main") != std::string::npos) foo = &row;
    if (kind == "call" && caller.find("baz") != std::string::npos) baz = &row;
  }
  ASSERT_NE(bar, nullptr) << sites.dump(1);
  ASSERT_NE(foo, nullptr) << sites.dump(1);
  ASSERT_NE(baz, nullptr) << sites.dump(1);
  EXPECT_LT((*bar)["parallelism"].get<double>(), (*foo)["parallelism"].get<double>());
  EXPECT_LT((*bar)["parallelism"].get<double>(), (*baz)["parallelism"].get<double>());
  EXPECT_GT((*bar)["span_on_span"].get<double>(), (*foo)["span_on_span"].get<double>());
  EXPECT_GT((*bar)["span_on_span"].get<double>(), (*baz)["span_on_span"].get<double>());
  // And the sorted view puts the lowest parallelism first.
  const ToolResult sorted = RunTool({CILKPROF_TEST_CILKPROF, "view", "callsites", "--sort", "parallelism", profile});
  ASSERT_EQ(sorted.exit_code, 0) << sorted.err;
  const size_t first_row = sorted.out.find('\n', sorted.out.find('\n') + 1) + 1;
  EXPECT_NE(sorted.out.substr(first_row, sorted.out.find('\n', first_row) - first_row).find("bar"), std::string::npos)
      << sorted.out;
  const ToolResult bad_sort = RunTool({CILKPROF_TEST_CILKPROF, "view", "callsites", "--sort", "nope", profile});
  EXPECT_EQ(bad_sort.exit_code, 2);
  EXPECT_NE(bad_sort.err.find("unknown --sort column"), std::string::npos);
}

}  // namespace
