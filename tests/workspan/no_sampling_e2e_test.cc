// CILKPROF_SAMPLE_SOURCE=none (issue 13), end to end: the real agent preloaded into
// a program on the Cilk runtime, the real aggregator (in this process, as cilkprof run
// embeds it), the profile file read back. The run that measures work and span without
// sampling must take no sample and arm nothing that sends a signal, still measure work
// and span, warn about nothing, and name the runtime the agent attached to
// (ProcessInfo.runtime), which a program without the runtime leaves empty.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/server.h"
#include "e2e_support.h"

namespace {

using cilkprof::agent::testing::RunResult;
using cilkprof::agent::testing::RunUnderAgent;
namespace aggregator = cilkprof::aggregator;
namespace profile = cilkprof::profile;

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/cilkprof-nosample-XXXXXX";
    path_ = mkdtemp(pattern) != nullptr ? pattern : "";
  }
  ~TempDir() {
    if (!path_.empty()) std::system(("rm -rf '" + path_ + "'").c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct ProfiledRun {
  RunResult program;
  std::vector<profile::Profile> profiles;  // in the order they were written
};

// Runs `args` of `program` under the agent with `env`, against an aggregator that
// writes every process's profile into a temporary directory (skip_empty_profiles as
// `cilkprof run` sets it, unless `keep_all`).
ProfiledRun Profile(const std::string& program, const std::vector<std::string>& args,
            std::map<std::string, std::string> env, bool keep_all = false) {
  TempDir dir;
  ProfiledRun run;
  aggregator::AggregatorOptions options;
  options.unix_socket_path = dir.path() + "/agg.sock";
  options.skip_empty_profiles = !keep_all;
  int written = 0;
  options.output_path = [&dir, &written](const aggregator::ProcessKey& key) {
    return dir.path() + "/" + std::to_string(key.pid) + "." + std::to_string(written++) + ".cilkprof";
  };
  auto started = aggregator::Aggregator::Start(options);
  if (!started.ok()) {
    ADD_FAILURE() << started.status().message();
    return run;
  }
  std::unique_ptr<aggregator::Aggregator> agg = std::move(started).value();
  env["CILKPROF_SOCKET"] = options.unix_socket_path;
  env["CILK_NWORKERS"] = "2";
  run.program = RunUnderAgent(program, args, env, dir.path());
  EXPECT_EQ(run.program.exit_code, 0) << run.program.err;
  for (const aggregator::WrittenProfile& w : agg->Finish(std::chrono::seconds(30))) {
    if (w.recorded_nothing) continue;
    EXPECT_TRUE(w.status.ok()) << w.status.message();
    auto read = aggregator::ReadProfileFile(w.path);
    if (!read.ok()) {
      ADD_FAILURE() << read.status().message();
      continue;
    }
    run.profiles.push_back(std::move(read).value());
  }
  return run;
}

const profile::Profile* ProfileOf(const ProfiledRun& run, uint32_t pid) {
  for (const profile::Profile& p : run.profiles) {
    if (p.process().pid() == pid) return &p;
  }
  return nullptr;
}

std::string Warnings(const profile::Profile& p) {
  std::string all;
  for (const std::string& w : p.process().warnings()) all += "\n  " + w;
  return all;
}

const std::map<std::string, std::string> kNoSampling = {{"CILKPROF_SAMPLE_SOURCE", "none"}};

TEST(NoSamplingE2E, CilkProgramIsMeasuredUnsampledAndNamesItsRuntime) {
  const ProfiledRun run = Profile(CILKPROF_TEST_NO_SAMPLING_PROGRAM, {"fib", "27"}, kNoSampling);
  // Nothing armed that could send a signal: no handler for SIGPROF, no perf event,
  // no POSIX timer (read from the kernel by the program itself).
  EXPECT_NE(run.program.out.find("fib(27) = 196418"), std::string::npos) << run.program.out;
  EXPECT_NE(run.program.out.find("sigprof_caught=0 perf_events=0 timers=0"), std::string::npos)
      << run.program.out;
  EXPECT_EQ(run.program.err.find("perf_event_open"), std::string::npos) << run.program.err;

  const profile::Profile* p = ProfileOf(run, static_cast<uint32_t>(run.program.pid));
  ASSERT_NE(p, nullptr) << "no profile of the program";
  EXPECT_EQ(p->process().sample_source(), "none");
  EXPECT_EQ(p->process().profiling_signal(), 0u);
  EXPECT_EQ(p->totals().samples(), 0u);
  EXPECT_EQ(p->totals().idle_samples(), 0u);
  EXPECT_EQ(p->totals().probe_samples(), 1u) << "cilkprof_probe still samples synchronously";
  EXPECT_EQ(p->totals().unsampled_ns(), 0u);
  EXPECT_EQ(p->totals().unseen_thread_cpu_ns(), 0u);
  EXPECT_GE(p->threads_size(), 2) << "the runtime's workers are registered threads";
  EXPECT_EQ(p->process().warnings_size(), 0) << Warnings(*p);
  EXPECT_EQ(p->process().end_reason(), "exit");
  ASSERT_TRUE(p->has_workspan()) << "work and span are measured without sampling";
  EXPECT_GT(p->workspan().work(), 0u);
  EXPECT_GT(p->workspan().spawns(), 0u);
  EXPECT_EQ(p->process().runtime(), "cilk-model");
}

// The runtime is named whether the work/span tool runs or not: the CLI decides from it
// whether the second, instrumented run is worth making.
TEST(NoSamplingE2E, RuntimeIsNamedWithWorkSpanOff) {
  const ProfiledRun run = Profile(CILKPROF_TEST_NO_SAMPLING_PROGRAM, {"fib", "20"}, {{"CILKPROF_WORKSPAN", "0"}});
  const profile::Profile* p = ProfileOf(run, static_cast<uint32_t>(run.program.pid));
  ASSERT_NE(p, nullptr) << "no profile of the program";
  EXPECT_FALSE(p->has_workspan());
  EXPECT_EQ(p->process().runtime(), "cilk-model");
}

// A program that never starts the runtime: nothing attached, so no runtime; and its
// profile is written although it recorded nothing (it is the program).
TEST(NoSamplingE2E, ProgramWithoutRuntimeHasNoRuntimeAndIsStillWritten) {
  const ProfiledRun run = Profile(CILKPROF_TEST_NO_SAMPLING_PROGRAM, {"plain"}, kNoSampling);
  EXPECT_NE(run.program.out.find("sigprof_caught=0 perf_events=0 timers=0"), std::string::npos)
      << run.program.out;
  const profile::Profile* p = ProfileOf(run, static_cast<uint32_t>(run.program.pid));
  ASSERT_NE(p, nullptr) << "the program's profile must be written even with 0 samples";
  EXPECT_EQ(p->totals().samples(), 0u);
  EXPECT_EQ(p->totals().probe_samples(), 0u);
  EXPECT_FALSE(p->has_workspan());
  EXPECT_EQ(p->process().runtime(), "");
  EXPECT_EQ(p->process().warnings_size(), 0) << Warnings(*p);
}

// A fork child inherits the parent's attach (the runtime's state, the agent's view of
// it, the work/span hooks are all memory the child copies), so it names the runtime too.
TEST(NoSamplingE2E, ForkChildReportsTheInheritedRuntime) {
  const ProfiledRun run = Profile(CILKPROF_TEST_NO_SAMPLING_PROGRAM, {"fork", "18"}, kNoSampling, /*keep_all=*/true);
  const uint32_t parent = static_cast<uint32_t>(run.program.pid);
  ASSERT_EQ(run.profiles.size(), 2u);
  const profile::Profile* child = nullptr;
  for (const profile::Profile& p : run.profiles) {
    if (p.process().ppid() == parent) child = &p;
  }
  ASSERT_NE(child, nullptr) << "no profile of the fork child";
  EXPECT_EQ(child->process().sample_source(), "none");
  EXPECT_EQ(child->totals().samples(), 0u);
  EXPECT_EQ(child->process().runtime(), "cilk-model");
  EXPECT_EQ(child->process().warnings_size(), 0) << Warnings(*child);
}

}  // namespace
