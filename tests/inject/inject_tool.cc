// inject_tool PID DSO: loads DSO into the running process PID with the injector of
// `cilkprof attach` and calls its cilkprof_agent_start_injected(). For trying
// injection by hand; the tests use it for the permission check as another user.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "inject/injector.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: inject_tool PID DSO\n");
    return 2;
  }
  const pid_t pid = static_cast<pid_t>(std::atol(argv[1]));
  cilkprof::cli::inject::InjectionReport report;
  cilkprof::Status status = cilkprof::cli::inject::InjectAgent(pid, argv[2], &report);
  if (!status.ok()) {
    std::fprintf(stderr, "inject_tool: %s\n", status.message().c_str());
    return 1;
  }
  std::printf("injected %s into %d: thread %d ran it, %d threads stopped, longest stop %.3f ms\n", argv[2], pid,
              report.hijacked_tid, report.threads, static_cast<double>(report.longest_stop.count()) / 1000.0);
  return 0;
}
