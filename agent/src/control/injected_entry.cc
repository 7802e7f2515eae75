// The entry point `cilkprof attach` calls after its ptrace injection has dlopen()ed the
// agent into a running process (docs/INJECTION.md): starts the agent in standby, with
// its control socket, exactly as CILKPROF_STANDBY=1 would have at start-up.
//
// Returns 0 on success; otherwise 1, with the reason in cilkprof_agent_injection_error
// (a NUL-terminated string the injector reads out of the process's memory), and the
// agent stays inactive: nothing armed, no thread left, nothing written to the program's
// output.
#include <pthread.h>

#include <cstring>
#include <string>

#include "agent_state.h"
#include "config.h"
#include "real_functions.h"

#define CILKPROF_EXPORT extern "C" __attribute__((visibility("default")))

extern "C" {
__attribute__((visibility("default"))) char cilkprof_agent_injection_error[256] = {};
}

namespace {

void SetError(const std::string& text) {
  std::strncpy(cilkprof_agent_injection_error, text.c_str(), sizeof cilkprof_agent_injection_error - 1);
  cilkprof_agent_injection_error[sizeof cilkprof_agent_injection_error - 1] = '\0';
}

struct StartResult {
  bool ok = false;
  std::string why;
};

void* StartInjected(void* arg) {
  auto* result = static_cast<StartResult*>(arg);
  // The process's environment is not the profiler's: the defaults, and the settings of
  // each attach request.
  std::vector<std::string> ignored;
  const cilkprof::agent::Config config =
      cilkprof::agent::ParseConfig([](const char*) -> const char* { return nullptr; }, &ignored);
  result->ok = cilkprof::agent::StartStandby(config, /*injected=*/true, &result->why);
  return nullptr;
}

}  // namespace

CILKPROF_EXPORT int cilkprof_agent_start_injected(void) {
  using namespace cilkprof::agent;
  if (g_state != nullptr) {
    if (g_state->standby) return 0;  // injected or preloaded in standby before: nothing to do
    SetError("the agent is already active in this process (started by cilkprof run)");
    return 1;
  }
  // The start-up runs on a thread of its own: this one is the borrowed thread of the
  // injection, on a scratch stack that ends in the injector's fake return address, and
  // the unwinder's warm-up (which walks the calling thread's stack under its fault
  // guard) must not fault there, where the injector, not the guard, would catch it.
  pthread_t starter;
  StartResult result;
  const int rc = real::pthread_create()(&starter, nullptr, StartInjected, &result);
  if (rc != 0) {
    SetError("cannot start a thread in the process: " + std::string(std::strerror(rc)));
    return 1;
  }
  pthread_join(starter, nullptr);
  if (!result.ok) {
    SetError(result.why);
    return 1;
  }
  return 0;
}
