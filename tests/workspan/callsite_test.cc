// Call sites as the Cilkprof thesis defines them (issue 13), end to end: the program
// of the issue (callsite_program.cc) through cilkprof-run with the real agent and
// `cilkprof view callsites`, in scope mode (built as is) and in full mode (built
// with function hooks, cilk::profile), on 1 and 2 workers and under forced steals.
// Under the counter clock every row's count, work and span must equal an independent
// model of the program (below), row by row, each at the caller's line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "run_tool.h"

using cilkprof::cli::testing::RunTool;
using cilkprof::cli::testing::TempDir;
using cilkprof::cli::testing::ToolResult;
using Json = nlohmann::json;

namespace {

constexpr int kN = 10;

// The line of callsite_program.cc that ends with `// MARKER`.
int LineOf(const std::string& marker) {
  std::ifstream in(CILKPROF_TEST_PROGRAM_SOURCE);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.size() >= marker.size() + 3 && line.compare(line.size() - marker.size() - 3, std::string::npos,
                                                         "// " + marker) == 0) {
      return number;
    }
  }
  ADD_FAILURE() << "no line ends with // " << marker;
  return -1;
}

enum Site { kRoot, kMainCall, kSpawn, kCallH, kLeaf, kSort };
struct Figures {
  uint64_t count = 0, work = 0, span = 0;
  bool operator==(const Figures&) const = default;
};
using Cost = std::pair<uint64_t, uint64_t>;  // work, span (burden 0)

// The program's call sites as the thesis defines them, evaluated on its call tree:
// each invocation of a site adds to its count; top-most invocations (no enclosing
// invocation of the same site) add their work and span. In scope mode an invocation
// of h is its scope (h(n < 2) has none) and leaf and sort_some are invisible; in full
// mode every call is an invocation from entry to exit. h(n - 1), called by the
// spawned lambda itself, belongs to the spawn in both.
class Model {
 public:
  explicit Model(bool full) : full_(full) {
    Invoke(kRoot, [&] { return H(kN, kMainCall); });
  }
  const std::map<Site, Figures>& sites() const { return sites_; }

 private:
  template <class Body>
  Cost Invoke(int site, Body body) {
    const bool top = site >= 0 && std::find(active_.begin(), active_.end(), site) == active_.end();
    if (site >= 0) active_.push_back(site);
    const Cost cost = body();
    if (site >= 0) {
      active_.pop_back();
      Figures& f = sites_[static_cast<Site>(site)];
      ++f.count;
      if (top) {
        f.work += cost.first;
        f.span += cost.second;
      }
    }
    return cost;
  }

  // h(n) called through `site` (-1: by the spawned lambda itself).
  Cost H(int n, int site) {
    if (full_) {
      return Invoke(site, [&] {
        const Cost leaf = Invoke(kLeaf, [] { return Cost{1, 1}; });
        if (n < 2) return leaf;
        const Cost scope = Scope(n);
        return Cost{leaf.first + scope.first, leaf.second + scope.second};
      });
    }
    if (n < 2) return {1, 1};  // leaf only: no scope, no invocation
    const Cost scope = Invoke(site, [&] { return Scope(n); });
    return {1 + scope.first, 1 + scope.second};  // leaf(1) is the caller's
  }

  Cost Scope(int n) {
    const Cost child = Invoke(kSpawn, [&] { return H(n - 1, -1); });
    const Cost call = H(n - 2, kCallH);
    const Cost sort = full_ ? Invoke(kSort, [] { return Cost{2, 2}; }) : Cost{2, 2};
    return {child.first + call.first + sort.first, std::max(child.second, call.second + sort.second)};
  }

  bool full_;
  std::vector<int> active_;
  std::map<Site, Figures> sites_;
};

struct Case {
  bool full;
  std::string workers;
  bool force_steal;
};

class CallSites : public ::testing::TestWithParam<Case> {};

TEST_P(CallSites, EveryRowIsTheCallersCallWithExactFigures) {
  const Case c = GetParam();
  TempDir dir;
  const std::string profile = dir.File("p.cilkprof");
  std::vector<std::string> env = {std::string("CILKPROF_AGENT=") + CILKPROF_TEST_AGENT, "CILK_NWORKERS=" + c.workers,
                                  "CILKPROF_WS_CLOCK=counter", "CILKPROF_BURDEN=0"};
  if (c.force_steal) env.push_back("CILK_FORCE_STEAL=1");
  const std::string program = c.full ? CILKPROF_TEST_PROGRAM_CALLS : CILKPROF_TEST_PROGRAM;
  const ToolResult run = RunTool({CILKPROF_TEST_CILKPROF_RUN, "-q", "-o", profile, "--", program, std::to_string(kN)}, "", env);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const ToolResult view = RunTool({CILKPROF_TEST_CILKPROF, "view", "callsites", "--format", "json", profile});
  ASSERT_EQ(view.exit_code, 0) << view.err;
  const Json rows = Json::parse(view.out);
  ASSERT_TRUE(rows.is_array());

  const int main_line = LineOf("CALL_MAIN"), spawn_line = LineOf("SPAWN_H"), call_line = LineOf("CALL_H"),
            leaf_line = LineOf("CALL_LEAF"), sort_line = LineOf("CALL_SORT");
  std::map<Site, Figures> seen;
  for (const Json& row : rows) {
    const std::string kind = row["kind"], caller = row["caller"], callee = row["callee"];
    const int line = row["line"].get<int>();
    const bool in_program = row["file"].get<std::string>().find("callsite_program.cc") != std::string::npos;
    Site site;
    if (kind == "spawn" && in_program && line == spawn_line && caller == "h(int)" && callee == "h(int)") {
      site = kSpawn;
    } else if (kind == "call" && in_program && line == call_line && caller == "h(int)" && callee == "h(int)") {
      site = kCallH;
    } else if (kind == "call" && in_program && line == main_line && callee == "h(int)") {
      site = kMainCall;  // from main's lambda
    } else if (kind == "call" && in_program && line == main_line && callee.find("cilk::run") != std::string::npos) {
      site = kRoot;
    } else if (kind == "call" && in_program && line == leaf_line && caller == "h(int)" && callee == "leaf(int)") {
      site = kLeaf;
    } else if (kind == "call" && in_program && line == sort_line && caller == "h(int)" && callee == "sort_some(int)") {
      site = kSort;
    } else {
      // Only one more: in full mode, cilk::run's call of main's lambda (a function
      // called by the library's code, through std::invoke), with the root's figures.
      EXPECT_TRUE(c.full && callee.find("main::{lambda()#1}") != std::string::npos &&
                  (caller.find("cilk::run") != std::string::npos || caller.find("std::__invoke") != std::string::npos))
          << "unexpected row " << row.dump();
      continue;
    }
    EXPECT_EQ(seen.count(site), 0u) << "two rows for one call site: " << row.dump();
    seen[site] = {row["count"].get<uint64_t>(), static_cast<uint64_t>(row["work_on_work"].get<double>()),
                  static_cast<uint64_t>(row["span_on_work"].get<double>())};
  }
  const Model model(c.full);
  const char* names[] = {"cilk::run", "main -> h", "spawn", "h -> h(n - 2)", "h -> leaf", "h -> sort_some"};
  for (const auto& [site, want] : model.sites()) {
    auto it = seen.find(site);
    if (it == seen.end()) {
      ADD_FAILURE() << "no row for " << names[site] << "\n" << view.out;
      continue;
    }
    EXPECT_EQ(it->second.count, want.count) << names[site];
    EXPECT_EQ(it->second.work, want.work) << names[site];
    EXPECT_EQ(it->second.span, want.span) << names[site];
  }
  EXPECT_EQ(seen.size(), model.sites().size()) << view.out;
  // The whole program: the root's figures.
  const ToolResult summary = RunTool({CILKPROF_TEST_CILKPROF, "summary", "--format", "json", profile});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  const Json s = Json::parse(summary.out);
  EXPECT_EQ(s["work"].get<double>(), static_cast<double>(model.sites().at(kRoot).work));
  EXPECT_EQ(s["span"].get<double>(), static_cast<double>(model.sites().at(kRoot).span));
}

INSTANTIATE_TEST_SUITE_P(Modes, CallSites,
                         ::testing::Values(Case{false, "1", false}, Case{false, "2", false}, Case{false, "2", true},
                                           Case{true, "1", false}, Case{true, "2", false}, Case{true, "2", true}),
                         [](const auto& info) {
                           return std::string(info.param.full ? "functions" : "scopes") + "_" + info.param.workers +
                                  "_workers" + (info.param.force_steal ? "_forced_steals" : "");
                         });

}  // namespace
