// The summary: figures, top functions, warnings, and the JSON contract.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cilkprof/views/blame_metrics.h"
#include "cilkprof/views/summary.h"
#include "views_test_profile.h"

namespace cilkprof::views {
namespace {

TEST(Summary, Figures) {
  const ProfileSummary s = Summarize(testing::SmallProfile(), "test.cilkprof", 3);
  EXPECT_EQ(s.samples, 14u);
  EXPECT_EQ(s.threads, 2u);
  EXPECT_DOUBLE_EQ(s.duration_s, 0.25);
  EXPECT_DOUBLE_EQ(s.partial_unwind_rate, 2.0 / 14);
  EXPECT_EQ(s.metric, "work");
  ASSERT_EQ(s.top_functions.size(), 3u);
  EXPECT_EQ(s.top_functions[0].name, "b");
  EXPECT_DOUBLE_EQ(s.top_functions[0].exclusive, 5e6);
  EXPECT_EQ(s.top_functions[1].name, "c");
  EXPECT_EQ(s.top_functions[2].name, "helper");
  ASSERT_EQ(s.warnings.size(), 1u);  // 14% partial unwinds
  EXPECT_NE(s.warnings[0].find("partial call path"), std::string::npos);
}

TEST(Summary, Text) {
  const std::string text = RenderSummaryText(Summarize(testing::SmallProfile(), "test.cilkprof", 2));
  EXPECT_EQ(text,
            "Program          /bin/prog (pid 42)\n"
            "Profile          test.cilkprof\n"
            "Duration         250.0 ms\n"
            "Threads          2\n"
            "Samples          14\n"
            "Partial unwinds  14.29% (2)\n"
            "Total samples    14\n"
            "Total work       13.5 ms\n"
            "Top functions by exclusive work:\n"
            "   37.0%  5.0 ms  b\n"
            "   37.0%  5.0 ms  c\n"
            "Warning: 14.3% of samples kept only a partial call path (shown under <partial unwind>); code "
            "without unwind information or frame pointers cuts unwinding short\n");
}

TEST(Summary, JsonContract) {
  const profile::Profile p = testing::SmallProfile();
  const auto json = nlohmann::json::parse(RenderSummaryJson(Summarize(p, "test.cilkprof"), p));
  EXPECT_EQ(json["samples"], 14);
  EXPECT_EQ(json["threads"], 2);
  EXPECT_DOUBLE_EQ(json["duration_s"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(json["partial_unwind_rate"].get<double>(), 2.0 / 14);
  EXPECT_DOUBLE_EQ(json["work"].get<double>(), 13.5e6);  // each metric's total under its name
  EXPECT_DOUBLE_EQ(json["metrics"]["samples"]["total"].get<double>(), 14);
  EXPECT_EQ(json["metrics"]["work"]["unit"], "ns");
  EXPECT_EQ(json["top_functions"][0]["name"], "b");
  EXPECT_EQ(json["warnings"].size(), 1u);
  EXPECT_EQ(json["command"], nlohmann::json::array({"prog", "--size=3"}));
}

TEST(Summary, EmptyProfileWarnsAndDoesNotDivideByZero) {
  profile::Profile empty;
  const ProfileSummary s = Summarize(empty, "empty.cilkprof");
  EXPECT_EQ(s.samples, 0u);
  EXPECT_EQ(s.partial_unwind_rate, 0);
  ASSERT_FALSE(s.warnings.empty());
  EXPECT_NE(s.warnings[0].find("no samples"), std::string::npos);
  EXPECT_NO_THROW(nlohmann::json::parse(RenderSummaryJson(s, empty)));
  EXPECT_FALSE(RenderSummaryText(s).empty());
}

// Blame figures, derived by hand from BlameProfile (views_test_profile.h).
TEST(SummaryBlame, WholeProgramFigures) {
  const ProfileSummary s = Summarize(testing::BlameProfile(), "b.cilkprof");
  ASSERT_TRUE(s.blame.present);
  const BlameSummary& b = s.blame;
  EXPECT_DOUBLE_EQ(b.work, 290e6);
  EXPECT_DOUBLE_EQ(b.idleness, 62e6);
  EXPECT_DOUBLE_EQ(b.overhead, 48e6);
  EXPECT_DOUBLE_EQ(b.effort, 400e6);
  EXPECT_DOUBLE_EQ(b.idleness_percent, 15.5);
  EXPECT_DOUBLE_EQ(b.overhead_percent, 12.0);
  EXPECT_DOUBLE_EQ(b.idle_ns, 31e6);
  EXPECT_DOUBLE_EQ(b.idleness_skew, 1.0);  // (62 - 31) / 31
  EXPECT_EQ(b.idle_samples, 7u);
  EXPECT_EQ(b.unattributed_overhead, 1u);
}

TEST(SummaryBlame, TopContextsByEffortWithTheirInterpretation) {
  const ProfileSummary s = Summarize(testing::BlameProfile(), "b.cilkprof", 10);
  // main holds everything and spends nothing itself: skipped; helper is inlined code: skipped.
  ASSERT_EQ(s.blame.top_contexts.size(), 4u);
  const char* names[] = {"A", "B", "C", "D"};  // 100 ms of effort each: by name
  const char* interpretations[] = {"effectively parallel", "coarsen the granularity", "refine the granularity",
                                   "change the parallelization strategy"};
  const double idle[] = {4, 4, 24, 30}, overhead[] = {6, 16, 6, 20};
  for (size_t i = 0; i < 4; ++i) {
    const BlameContext& c = s.blame.top_contexts[i];
    EXPECT_EQ(c.name, names[i]);
    EXPECT_DOUBLE_EQ(c.effort, 100e6) << c.name;
    EXPECT_DOUBLE_EQ(c.idleness_percent, idle[i]) << c.name;
    EXPECT_DOUBLE_EQ(c.overhead_percent, overhead[i]) << c.name;
    EXPECT_EQ(c.interpretation.rfind(interpretations[i], 0), 0u) << c.name << ": " << c.interpretation;
  }
  EXPECT_DOUBLE_EQ(s.blame.top_contexts[3].work, 50e6);  // D's own 40 and its inlined helper's 10
  EXPECT_EQ(Summarize(testing::BlameProfile(), "b.cilkprof", 2).blame.top_contexts.size(), 2u);
}

// clang's .omp_outlined. and .omp_task_entry. wrappers that spend (nearly) nothing
// themselves repeat their callees' figures: skipped (in BOTS' sort they were 7 of the
// 10 rows). GCC's outlined region holds the user's code: kept.
TEST(SummaryBlame, TopContextsSkipOpenMpGlueThatSpendsNothing) {
  const ProfileSummary s = Summarize(testing::OpenMpGlueProfile(), "omp.cilkprof", 10);
  std::vector<std::string> names;
  for (const BlameContext& c : s.blame.top_contexts) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"E", "G._omp_fn.0", "F"}));
}

TEST(SummaryBlame, InterpretationThresholdsAreInclusive) {
  EXPECT_EQ(InterpretBlame(19.99, 9.99), "effectively parallel");
  EXPECT_EQ(InterpretBlame(20, 9.99).rfind("refine", 0), 0u);
  EXPECT_EQ(InterpretBlame(19.99, 10).rfind("coarsen", 0), 0u);
  EXPECT_EQ(InterpretBlame(20, 10).rfind("change", 0), 0u);
}

TEST(SummaryBlame, TextExplainsTheIdleWorkersMeasurement) {
  const std::string text = RenderSummaryText(Summarize(testing::BlameProfile(), "b.cilkprof", 5));
  EXPECT_NE(text.find("Effort           400.0 ms (work + idleness + overhead)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Idleness         62.0 ms (15.5% of effort), blamed on the code that ran while workers idled\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("Idle workers     7 samples, 31.0 ms measured by their own clock (the idleness above is 2.00x "
                      "that: with --clock cpu, workers asleep take no samples)\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("Interpretation   coarsen the granularity"), std::string::npos) << text;
  EXPECT_NE(text.find("   25.0%  A  (4.0% idle, 6.0% overhead: effectively parallel)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("skew"), std::string::npos) << text;
  // The inlined helper is ranked among the functions, marked as inline code.
  EXPECT_NE(text.find("  10.0 ms  helper (inline)\n"), std::string::npos) << text;
}

// A program without a runtime: the agent records the blame metrics, all zero; the
// summary shows none of the runtime's lines (the JSON keeps every metric).
TEST(SummaryBlame, ProgramsWithoutARuntimeGetNoRuntimeLines) {
  profile::Profile p = testing::BlameProfile();
  for (auto& node : *p.mutable_nodes()) {
    for (int m = 2; m < node.exclusive_size(); ++m) node.set_exclusive(m, 0);
  }
  p.mutable_totals()->clear_idle_samples();
  p.mutable_totals()->clear_idle_ns();
  p.mutable_totals()->clear_overhead_samples();
  p.mutable_totals()->clear_unattributed_overhead();
  const ProfileSummary s = Summarize(p, "plain.cilkprof");
  EXPECT_FALSE(s.blame.present);
  const std::string text = RenderSummaryText(s);
  for (const char* line : {"Idleness", "Idle workers", "Overhead", "Effort", "Interpretation", "Total idleness",
                           "Total overhead", "Total effort", "Total probe", "effectively parallel", "Top contexts"}) {
    EXPECT_EQ(text.find(line), std::string::npos) << line << " in:\n" << text;
  }
  EXPECT_NE(text.find("Total work       290.0 ms\n"), std::string::npos) << text;
  const auto json = nlohmann::json::parse(RenderSummaryJson(s, p));
  EXPECT_TRUE(json["metrics"].contains("idleness"));
}

TEST(SummaryInline, FoldChargesInlinedCodeToItsCaller) {
  const ProfileSummary keep = Summarize(testing::SmallProfile(), "s.cilkprof", 10);
  bool helper_marked = false;
  for (const TopFunction& f : keep.top_functions) helper_marked |= f.name == "helper" && f.inlined;
  EXPECT_TRUE(helper_marked);
  BuildOptions fold;
  fold.inline_mode = InlineMode::kFold;
  const ProfileSummary folded = Summarize(testing::SmallProfile(), "s.cilkprof", 10, fold);
  for (const TopFunction& f : folded.top_functions) {
    EXPECT_NE(f.name, "helper");
    if (f.name == "a") {
      EXPECT_DOUBLE_EQ(f.exclusive, 2e6);  // the helper's 2 ms, inlined into a
    }
  }
  const auto json = nlohmann::json::parse(RenderSummaryJson(keep, testing::SmallProfile()));
  EXPECT_TRUE(json["top_functions"][2]["inlined"].get<bool>()) << json["top_functions"].dump();
}

// OpenMP (docs/OPENMP.md): the instrumentation of a process on libomp is mostly the
// capture of task creation contexts, in the sampled run too: the line says so, and does
// not advise a second work/span run that would not remove it.
TEST(Summary, InstrumentationOfAnOpenMpProcessNamesTheCaptures) {
  profile::Profile p = testing::BlameProfile();
  auto* metric = p.add_metrics();
  metric->set_name(kInstrumentationMetric);
  metric->set_unit("ns");
  p.mutable_nodes(2)->add_exclusive(300e6);
  p.mutable_process()->set_runtime("libomp-ompt");
  const ProfileSummary s = Summarize(p, "test.cilkprof", 3);
  ASSERT_TRUE(s.instrumentation.present);
  EXPECT_TRUE(s.instrumentation.openmp);
  const std::string text = RenderSummaryText(s);
  EXPECT_NE(text.find("creation context"), std::string::npos) << text;
  EXPECT_EQ(text.find("--workspan=same"), std::string::npos) << text;
}

// Samples in the work/span tool's code: their own line with the share and the dilation
// they imply, and never in effort (docs/WORKSPAN.md, "Instrumentation and the sampled
// profile").
TEST(Summary, InstrumentationShareAndDilation) {
  const profile::Profile without = testing::BlameProfile();
  profile::Profile p = without;
  auto* metric = p.add_metrics();
  metric->set_name(kInstrumentationMetric);
  metric->set_unit("ns");
  auto* a = p.mutable_nodes(2);  // A, the first row under main
  ASSERT_EQ(a->exclusive_size(), 4);
  a->add_exclusive(300e6);
  p.mutable_totals()->set_idle_ns(20000000);
  const ProfileSummary s = Summarize(p, "test.cilkprof", 3);
  const ProfileSummary base = Summarize(without, "test.cilkprof", 3);
  ASSERT_TRUE(s.instrumentation.present);
  EXPECT_FALSE(base.instrumentation.present);
  EXPECT_DOUBLE_EQ(s.blame.effort, base.blame.effort);
  EXPECT_DOUBLE_EQ(s.blame.work, base.blame.work);
  const double sampled = s.blame.work + s.blame.overhead + 300e6 + 20e6;
  EXPECT_DOUBLE_EQ(s.instrumentation.instrumentation, 300e6);
  EXPECT_DOUBLE_EQ(s.instrumentation.share, 300e6 / sampled);
  EXPECT_DOUBLE_EQ(s.instrumentation.dilation, sampled / (sampled - 300e6));
  const std::string text = RenderSummaryText(s);
  EXPECT_NE(text.find("Instrumentation  300.0 ms ("), std::string::npos) << text;
  EXPECT_NE(text.find("--workspan=same"), std::string::npos) << text;
  EXPECT_EQ(text.find("Total instrumentation"), std::string::npos) << text;
  EXPECT_EQ(RenderSummaryText(base).find("Instrumentation"), std::string::npos);
  const auto json = nlohmann::json::parse(RenderSummaryJson(s, p));
  EXPECT_DOUBLE_EQ(json["instrumentation"].get<double>(), 300e6);
  EXPECT_DOUBLE_EQ(json["instrumentation_share"].get<double>(), s.instrumentation.share);
  EXPECT_DOUBLE_EQ(json["dilation"].get<double>(), s.instrumentation.dilation);
}

}  // namespace
}  // namespace cilkprof::views
