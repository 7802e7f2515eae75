// OpenMP task edges (wire::EDGE_TASK, issue 17) in the exports, on TaskProfile
// (tests/cli/views_test_profile.h): pprof and folded put a "[task]" frame where they
// put "[spawn]" for a spawn, speedscope a "[task]" frame, the flame graph outlines a
// task's frame with its own class and legend entry, and the chrome-trace slice names
// (the timeline's logical paths) read "[task] f".
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "export/exporters.h"
#include "export/timeline_slices.h"
#include "pprof/profile.pb.h"
#include "views_test_profile.h"

namespace cilkprof::cli::exporters {
namespace {

namespace pb = perftools::profiles;
using views::testing::SmallProfile;
using views::testing::TaskProfile;

AnalysisInput InputOf(const profile::Profile& profile) {
  AnalysisInput input;
  input.profile = profile;
  input.nodes = views::ProfileNodes::Of(profile);
  input.profile.clear_nodes();  // as the file reader gives it: nodes in columns only
  return input;
}

std::string Export(const ExportFn& write, const profile::Profile& profile, const std::string& metric = "work") {
  ExportOptions options;
  options.metric = metric;
  std::ostringstream out;
  const Status written = write(InputOf(profile), options, out);
  EXPECT_TRUE(written.ok()) << written.message();
  return out.str();
}

// pprof: each sample's stack, root first, with its work value.
std::map<std::string, int64_t> PprofPaths(const std::string& file, std::vector<std::string>* comments) {
  google::protobuf::io::ArrayInputStream raw(file.data(), static_cast<int>(file.size()));
  google::protobuf::io::GzipInputStream gunzip(&raw, google::protobuf::io::GzipInputStream::GZIP);
  pb::Profile p;
  EXPECT_TRUE(p.ParseFromZeroCopyStream(&gunzip));
  std::map<uint64_t, const pb::Location*> locations;
  for (const pb::Location& l : p.location()) locations[l.id()] = &l;
  std::map<uint64_t, std::string> functions;
  for (const pb::Function& f : p.function()) functions[f.id()] = p.string_table(static_cast<int>(f.name()));
  std::map<std::string, int64_t> paths;
  for (const pb::Sample& s : p.sample()) {
    std::string path;
    for (auto id = s.location_id().rbegin(); id != s.location_id().rend(); ++id) {
      for (const pb::Line& line : locations.at(*id)->line()) path += (path.empty() ? "" : ";") + functions.at(line.function_id());
    }
    paths[path] += s.value(1);
  }
  for (int64_t c : p.comment()) comments->push_back(p.string_table(static_cast<int>(c)));
  return paths;
}

TEST(TaskEdgeExport, PprofHasATaskFrameBetweenTheTaskAndItsCreator) {
  std::vector<std::string> comments;
  const auto paths = PprofPaths(Export(WritePprof, TaskProfile()), &comments);
  const std::map<std::string, int64_t> expected = {
      {"main", 1'000'000},
      {"main;[task];c", 3'000'000},
      {"main;[spawn];c", 4'000'000},
      {"main;c", 2'000'000},
      {"main;[task];c;[task];d", 5'000'000},
  };
  EXPECT_EQ(paths, expected);
  EXPECT_NE(std::find_if(comments.begin(), comments.end(),
                         [](const std::string& c) { return c.starts_with("[task] frames mark OpenMP task edges"); }),
            comments.end())
      << testing::PrintToString(comments);
  // Profiles without tasks do not mention them.
  std::vector<std::string> cilk_comments;
  PprofPaths(Export(WritePprof, SmallProfile()), &cilk_comments);
  for (const std::string& c : cilk_comments) EXPECT_EQ(c.find("[task]"), std::string::npos) << c;
}

TEST(TaskEdgeExport, FoldedHasATaskFrame) {
  EXPECT_EQ(Export(WriteFolded, TaskProfile()),
            "main 1000000\n"
            "main;[task];c 3000000\n"
            "main;[task];c;[task];d 5000000\n"
            "main;[spawn];c 4000000\n"
            "main;c 2000000\n");
}

TEST(TaskEdgeExport, SpeedscopeHasATaskFrameOnTheStacks) {
  const nlohmann::json file = nlohmann::json::parse(Export(WriteSpeedscope, TaskProfile()));
  std::vector<std::string> frames;
  for (const auto& f : file["shared"]["frames"]) frames.push_back(f["name"]);
  std::map<std::string, double> stacks;
  const auto& merged = file["profiles"][0];
  for (size_t i = 0; i < merged["samples"].size(); ++i) {
    std::string path;
    for (const auto& f : merged["samples"][i]) path += (path.empty() ? "" : ";") + frames.at(f.get<size_t>());
    stacks[path] += merged["weights"][i].get<double>();
  }
  const std::map<std::string, double> expected = {
      {"main", 1e6}, {"main;[task];c", 3e6}, {"main;[spawn];c", 4e6}, {"main;c", 2e6}, {"main;[task];c;[task];d", 5e6},
  };
  EXPECT_EQ(stacks, expected);
}

TEST(TaskEdgeExport, FlameGraphOutlinesTaskFramesAndSaysSoInTheLegend) {
  const std::string svg = Export(WriteFlameGraphSvg, TaskProfile());
  // The two task frames (c and d under their creators), each with class t and a tooltip.
  size_t tasks = 0;
  for (size_t at = svg.find("<g class=\"frame "); at != std::string::npos; at = svg.find("<g class=\"frame ", at + 1)) {
    const std::string classes = svg.substr(at, svg.find('"', at + 10) - at);
    if (classes.ends_with(" t")) ++tasks;
  }
  EXPECT_EQ(tasks, 2u);
  EXPECT_NE(svg.find("\na task created by the frame below"), std::string::npos);
  EXPECT_NE(svg.find("<g class=\"swatch t\">"), std::string::npos);
  // The frame names are the functions', without the "[task] " prefix.
  EXPECT_EQ(svg.find("[task] "), std::string::npos);
  // Without tasks, no task swatch.
  EXPECT_EQ(Export(WriteFlameGraphSvg, SmallProfile()).find("swatch t"), std::string::npos);
}

TEST(TaskEdgeExport, TimelineSliceNamesMarkTasks) {
  const profile::Profile p = TaskProfile();
  const views::ProfileNodes nodes = views::ProfileNodes::Of(p);
  timeline::ContextNames names(p, nodes);
  EXPECT_EQ(names.Path(5, 8), "main > [task] c > [task] d");
  EXPECT_EQ(names.Path(3, 8), "main > [spawn] c");
  EXPECT_EQ(names.Path(4, 8), "main > c");
}

}  // namespace
}  // namespace cilkprof::cli::exporters
