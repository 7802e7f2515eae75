// Running a test program under the preloaded agent, for the end-to-end tests.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "test_receiver.h"

namespace cilkprof::agent::testing {

struct RunResult {
  pid_t pid = 0;
  int exit_code = -1;  // 128 + N when killed by signal N
  std::string out, err;
};

std::string ReadFile(const std::string& path);

// Runs `program` with `args`, the agent preloaded and `env` added (CILKPROF_* of the
// caller's environment are dropped so that they cannot change the test); stdout and
// stderr go through files in `dir`.
RunResult RunUnderAgent(const std::string& program, const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env, const std::string& dir);

// The program's "thread I tid T cpu_ns N" lines: cpuI -> N, tidI -> T.
std::map<std::string, uint64_t> Facts(const std::string& out);

const ThreadTotals* ThreadByIndex(const ProcessProfile& p, uint32_t index);

}  // namespace cilkprof::agent::testing
