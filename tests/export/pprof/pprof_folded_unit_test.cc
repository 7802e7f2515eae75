// The pprof and folded exporters on the views' small in-memory profiles
// (tests/cli/views_test_profile.h): the pprof file decoded with our own copy of pprof's
// schema (the reader's view is test_exports.py's, with go tool pprof), folded lines
// checked one by one. Runs without go.
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "export/exporters.h"
#include "pprof/profile.pb.h"
#include "views_test_profile.h"

namespace cilkprof::cli::exporters {
namespace {

namespace pb = perftools::profiles;
using views::testing::LockProfile;
using views::testing::SmallProfile;

AnalysisInput InputOf(const profile::Profile& profile) {
  AnalysisInput input;
  input.profile = profile;
  input.nodes = views::ProfileNodes::Of(profile);
  input.profile.clear_nodes();  // as the file reader gives it: nodes in columns only
  return input;
}

pb::Profile Pprof(const profile::Profile& profile, const std::string& metric = "") {
  ExportOptions options;
  options.metric = metric;
  std::ostringstream out;
  const Status written = WritePprof(InputOf(profile), options, out);
  EXPECT_TRUE(written.ok()) << written.message();
  const std::string file = out.str();
  EXPECT_EQ(file.substr(0, 2), "\x1f\x8b");  // gzip
  google::protobuf::io::ArrayInputStream raw(file.data(), static_cast<int>(file.size()));
  google::protobuf::io::GzipInputStream gunzip(&raw, google::protobuf::io::GzipInputStream::GZIP);
  pb::Profile decoded;
  EXPECT_TRUE(decoded.ParseFromZeroCopyStream(&gunzip));
  return decoded;
}

// Function names of each sample, leaf first, and the values of one sample type.
struct Decoded {
  std::vector<std::vector<std::string>> stacks;
  std::vector<std::vector<int64_t>> values;
  std::vector<std::map<std::string, std::string>> labels;
};

Decoded Stacks(const pb::Profile& p) {
  std::map<uint64_t, const pb::Location*> locations;
  for (const pb::Location& l : p.location()) locations[l.id()] = &l;
  std::map<uint64_t, std::string> functions;
  for (const pb::Function& f : p.function()) functions[f.id()] = p.string_table(static_cast<int>(f.name()));
  Decoded d;
  for (const pb::Sample& s : p.sample()) {
    std::vector<std::string> stack;
    for (uint64_t id : s.location_id()) {
      for (const pb::Line& line : locations.at(id)->line()) stack.push_back(functions.at(line.function_id()));
    }
    d.stacks.push_back(stack);
    d.values.emplace_back(s.value().begin(), s.value().end());
    std::map<std::string, std::string> labels;
    for (const pb::Label& l : s.label()) {
      labels[p.string_table(static_cast<int>(l.key()))] = p.string_table(static_cast<int>(l.str()));
    }
    d.labels.push_back(labels);
  }
  return d;
}

std::string Join(const std::vector<std::string>& frames) {
  std::string text;
  for (const std::string& f : frames) text += (text.empty() ? "" : ";") + f;
  return text;
}

TEST(PprofExport, SampleTypesAreTheMetricsWithPprofUnits) {
  const pb::Profile p = Pprof(SmallProfile());
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(p.string_table(static_cast<int>(p.sample_type(0).type())), "samples");
  EXPECT_EQ(p.string_table(static_cast<int>(p.sample_type(0).unit())), "count");
  EXPECT_EQ(p.string_table(static_cast<int>(p.sample_type(1).type())), "work");
  EXPECT_EQ(p.string_table(static_cast<int>(p.sample_type(1).unit())), "nanoseconds");
  EXPECT_EQ(p.string_table(static_cast<int>(p.default_sample_type())), "work");
  EXPECT_EQ(p.string_table(0), "");
}

TEST(PprofExport, OneSamplePerNodeWithValuesAndTheTotalsOfTheProfile) {
  const Decoded d = Stacks(Pprof(SmallProfile()));
  int64_t samples = 0, work = 0;
  for (const auto& v : d.values) {
    samples += v[0];
    work += v[1];
  }
  EXPECT_EQ(d.stacks.size(), 7u);  // the seven paths of SmallProfile
  EXPECT_EQ(samples, 14);
  EXPECT_EQ(work, 13'500'000);
}

TEST(PprofExport, InlinedFramesAreLinesInnermostFirstAndSpawnsAreFrames) {
  const Decoded d = Stacks(Pprof(SmallProfile()));
  std::vector<std::string> paths;
  for (const auto& stack : d.stacks) paths.push_back(Join(stack));
  // a@21 with helper inlined: one location, helper's Line before a's.
  EXPECT_NE(std::find(paths.begin(), paths.end(), "helper;a;main"), paths.end()) << testing::PrintToString(paths);
  // c spawned by main: a [spawn] frame between them, never a leaf.
  EXPECT_NE(std::find(paths.begin(), paths.end(), "c;[spawn];main"), paths.end()) << testing::PrintToString(paths);
  EXPECT_NE(std::find(paths.begin(), paths.end(), "c;main"), paths.end());
  EXPECT_NE(std::find(paths.begin(), paths.end(), "b;<partial unwind>"), paths.end());
  EXPECT_NE(std::find(paths.begin(), paths.end(), "?? [libm.so];b;helper;a;main"), paths.end());
}

TEST(PprofExport, MappingsHaveTheModulesAndAllLocationsAreSymbolized) {
  const pb::Profile p = Pprof(SmallProfile());
  ASSERT_GE(p.mapping_size(), 1);
  for (const pb::Mapping& m : p.mapping()) {
    EXPECT_TRUE(m.has_functions() && m.has_filenames() && m.has_line_numbers() && m.has_inline_frames());
    EXPECT_LT(m.memory_start(), m.memory_limit());
  }
  for (const pb::Location& l : p.location()) {
    EXPECT_GE(l.line_size(), 1);
    if (l.mapping_id() == 0) continue;
    const pb::Mapping& m = p.mapping(static_cast<int>(l.mapping_id() - 1));
    EXPECT_EQ(m.id(), l.mapping_id());
    EXPECT_GE(l.address(), m.memory_start());
    EXPECT_LT(l.address(), m.memory_limit());
  }
}

TEST(PprofExport, LockTimeStaysAtTheLockCallWithALabel) {
  const pb::Profile p = Pprof(LockProfile(), "lock_wait");
  EXPECT_EQ(p.string_table(static_cast<int>(p.default_sample_type())), "lock_wait");
  const Decoded d = Stacks(p);
  int lock_wait = -1;
  for (int t = 0; t < p.sample_type_size(); ++t) {
    if (p.string_table(static_cast<int>(p.sample_type(t).type())) == "lock_wait") lock_wait = t;
  }
  ASSERT_GE(lock_wait, 0);
  std::map<std::string, int64_t> by_leaf;
  for (size_t s = 0; s < d.stacks.size(); ++s) {
    if (d.values[s][static_cast<size_t>(lock_wait)] == 0) continue;
    EXPECT_EQ(d.labels[s].count("lock"), 1u) << Join(d.stacks[s]);
    by_leaf[d.stacks[s][0] + " @ " + d.labels[s].at("lock")] += d.values[s][static_cast<size_t>(lock_wait)];
  }
  EXPECT_EQ(by_leaf["pthread_mutex_lock @ g_mutex"], 80'000'000) << testing::PrintToString(by_leaf);
  EXPECT_EQ(by_leaf["worker(int) @ 0x7f0000001000"], 20'000'000) << testing::PrintToString(by_leaf);
}

TEST(PprofExport, RefusesAnUnknownOrDerivedMetricAndInverted) {
  ExportOptions options;
  std::ostringstream out;
  options.metric = "bogus";
  Status s = WritePprof(InputOf(SmallProfile()), options, out);
  EXPECT_NE(s.message().find("unknown metric 'bogus'"), std::string::npos) << s.message();
  options.metric = "effort";
  s = WritePprof(InputOf(LockProfile()), options, out);
  EXPECT_NE(s.message().find("derived"), std::string::npos) << s.message();
  options.metric = "";
  options.inverted = true;
  s = WritePprof(InputOf(SmallProfile()), options, out);
  EXPECT_NE(s.message().find("--inverted"), std::string::npos) << s.message();
}

std::map<std::string, long long> Folded(const profile::Profile& profile, const std::string& metric = "",
                                        bool inverted = false) {
  ExportOptions options;
  options.metric = metric;
  options.inverted = inverted;
  std::ostringstream out;
  const Status written = WriteFolded(InputOf(profile), options, out);
  EXPECT_TRUE(written.ok()) << written.message();
  std::map<std::string, long long> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) {
    const size_t space = line.rfind(' ');
    EXPECT_EQ(lines.count(line.substr(0, space)), 0u) << "one line per path: " << line;
    lines[line.substr(0, space)] = std::stoll(line.substr(space + 1));
  }
  return lines;
}

TEST(FoldedExport, OneLinePerContextWithItsExclusiveValue) {
  const std::map<std::string, long long> expected = {
      {"main", 1'000'000},
      {"main;a;helper", 2'000'000},
      {"main;a;helper;b", 3'000'000},
      {"main;a;helper;b;?? [libm.so]", 500'000},
      {"main;[spawn];c", 4'000'000},
      {"main;c", 1'000'000},
      {"<partial unwind>;b", 2'000'000},
  };
  EXPECT_EQ(Folded(SmallProfile()), expected);
}

TEST(FoldedExport, MetricPicksTheWeightAndInvertedReversesThePaths) {
  const auto samples = Folded(SmallProfile(), "samples");
  EXPECT_EQ(samples.at("main;[spawn];c"), 4);
  EXPECT_EQ(samples.at("main;a;helper;b;?? [libm.so]"), 1);
  const auto inverted = Folded(SmallProfile(), "", true);
  EXPECT_EQ(inverted.at("c;[spawn];main"), 4'000'000);
  EXPECT_EQ(inverted.at("?? [libm.so];b;helper;a;main"), 500'000);
}

TEST(FoldedExport, LockTimeStaysWithTheLockCall) {
  const auto wait = Folded(LockProfile(), "lock_wait");
  long long total = 0;
  for (const auto& [path, weight] : wait) {
    EXPECT_EQ(path.find("[lock"), std::string::npos) << path;
    total += weight;
  }
  EXPECT_EQ(total, 100'000'000);
}

TEST(FoldedExport, RefusesUnknownAndPercentMetrics) {
  ExportOptions options;
  std::ostringstream out;
  options.metric = "bogus";
  Status s = WriteFolded(InputOf(SmallProfile()), options, out);
  EXPECT_NE(s.message().find("unknown metric 'bogus'; this profile has: samples, work"), std::string::npos)
      << s.message();
  options.metric = "% idleness";
  s = WriteFolded(InputOf(LockProfile()), options, out);
  EXPECT_NE(s.message().find("percentage"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace cilkprof::cli::exporters
