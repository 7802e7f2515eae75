// What the lock blame end-to-end tests share (tests/locks/locks_e2e_test.cc for pthread
// locks, tests/ompt/ompt_locks_e2e_test.cc for OpenMP's): a profiled run, the views as
// JSON, and the checks of a holder/waiter shape (hold_long() holds the lock while
// wait_here() waits for it). A test target that includes this defines
// CILKPROF_TEST_CILKPROF, CILKPROF_TEST_CILKPROF_RUN and CILKPROF_TEST_AGENT and links
// tests/cli/run_tool.cc.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "run_tool.h"

namespace cilkprof::tests::locks {

using Json = nlohmann::json;

// `cilkprof-run -q -f --no-workspan -o DIR/NAME.cilkprof OPTIONS -- PROGRAM` with the
// agent under test; the profile's path.
inline std::string Profile(const cli::testing::TempDir& dir, const std::string& name,
                           const std::vector<std::string>& options, const std::vector<std::string>& program,
                           const std::vector<std::string>& env = {}) {
  const std::string out = dir.File(name + ".cilkprof");
  std::vector<std::string> argv = {CILKPROF_TEST_CILKPROF_RUN, "-q", "-f", "--no-workspan", "-o", out};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  std::vector<std::string> full_env = env;
  full_env.push_back(std::string("CILKPROF_AGENT=") + CILKPROF_TEST_AGENT);
  const cli::testing::ToolResult run = cli::testing::RunTool(argv, "", full_env);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return out;
}

// A command's standard output as JSON (discarded: not JSON).
inline Json JsonOf(const std::vector<std::string>& argv, int* exit_code = nullptr, std::string* err = nullptr) {
  const cli::testing::ToolResult r = cli::testing::RunTool(argv);
  if (exit_code != nullptr) *exit_code = r.exit_code;
  if (err != nullptr) *err = r.err;
  return Json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

// Sums `metric`'s exclusive values over a top-down JSON tree.
inline double TreeTotal(const Json& node, const std::string& metric) {
  double total = 0;
  if (node.contains("metrics") && node["metrics"].contains(metric)) {
    total += node["metrics"][metric].value("exclusive", 0.0);
  }
  if (node.contains("children")) {
    for (const Json& child : node["children"]) total += TreeTotal(child, metric);
  }
  return total;
}

// `cilkprof view locks` row of the shape's lock: its top holder is hold_long() with at
// least `min_holder_percent` of the blame, its top waiter wait_here() with at least
// `min_waiter_percent` of the wait.
inline void ExpectHoldLongBlamedAndWaitHereWaiting(const Json& lock, double min_holder_percent,
                                                   double min_waiter_percent) {
  ASSERT_FALSE(lock["holders"].empty()) << lock.dump(2);
  ASSERT_FALSE(lock["waiters"].empty()) << lock.dump(2);
  EXPECT_NE(lock["holders"][0].value("function", "").find("hold_long"), std::string::npos) << lock.dump(2);
  EXPECT_GE(lock["holders"][0].value("percent", 0.0), min_holder_percent) << lock.dump(2);
  EXPECT_NE(lock["waiters"][0].value("function", "").find("wait_here"), std::string::npos) << lock.dump(2);
  EXPECT_GE(lock["waiters"][0].value("percent", 0.0), min_waiter_percent) << lock.dump(2);
}

// The profile's exact lock totals conserve (wait = blame + unblamed, to the nanosecond)
// and hold at least `lock_wait` (one lock's); the tree's sampled lock_wait and
// lock_blame are within 0.6-1.4x of them (sampled charges: generous bounds).
inline void ExpectConservedAndSampledNearTheTotals(const std::string& profile, double lock_wait) {
  const Json summary = JsonOf({CILKPROF_TEST_CILKPROF, "summary", "--format", "json", profile});
  ASSERT_TRUE(summary.is_object() && summary.contains("locks")) << summary.dump();
  const Json& s = summary["locks"];
  const double total_wait = s.value("wait_ns", 0.0);
  EXPECT_NEAR(total_wait, s.value("blame_ns", 0.0) + s.value("unblamed_ns", 0.0), total_wait * 1e-9 + 1)
      << s.dump(2);
  EXPECT_GE(total_wait, lock_wait);
  const Json tree =
      JsonOf({CILKPROF_TEST_CILKPROF, "view", "top-down", "--format", "json", "--threshold", "0", profile});
  ASSERT_TRUE(tree.is_object()) << tree.dump().substr(0, 400);
  const double tree_wait = TreeTotal(tree, "lock_wait"), tree_blame = TreeTotal(tree, "lock_blame");
  EXPECT_GE(tree_wait, 0.6 * total_wait) << tree_wait << " sampled of " << total_wait;
  EXPECT_LE(tree_wait, 1.4 * total_wait) << tree_wait << " sampled of " << total_wait;
  EXPECT_GE(tree_blame, 0.6 * s.value("blame_ns", 0.0));
  EXPECT_LE(tree_blame, 1.4 * s.value("blame_ns", 0.0));
}

}  // namespace cilkprof::tests::locks
