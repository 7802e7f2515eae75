#include "instrumentation.h"

#include "cilkprof/runtime_abi.h"

namespace cilkprof::agent {

__thread uint32_t tls_instrumentation_depth __attribute__((tls_model("initial-exec"))) = 0;

namespace {

struct CodeRange {
  uintptr_t lo, hi;
};

CodeRange g_tool_code[kMaxToolCodeRanges];
// Ranges [0, g_tool_code_count) are complete: each is written before the count that
// publishes it (release), and the handler reads the count first (acquire).
uint32_t g_tool_code_count = 0;

}  // namespace

bool AddToolCode(uintptr_t lo, uintptr_t hi) {
  const uint32_t n = __atomic_load_n(&g_tool_code_count, __ATOMIC_RELAXED);
  for (uint32_t i = 0; i < n; ++i) {
    if (g_tool_code[i].lo == lo && g_tool_code[i].hi == hi) return true;
  }
  if (lo >= hi || n >= static_cast<uint32_t>(kMaxToolCodeRanges)) return false;
  g_tool_code[n] = CodeRange{lo, hi};
  __atomic_store_n(&g_tool_code_count, n + 1, __ATOMIC_RELEASE);
  return true;
}

bool InToolCode(uintptr_t pc) {
  const uint32_t n = __atomic_load_n(&g_tool_code_count, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < n; ++i) {
    if (pc >= g_tool_code[i].lo && pc < g_tool_code[i].hi) return true;
  }
  return false;
}

SampleKind ClassifySample(uint32_t state, bool in_instrumentation) {
  if (in_instrumentation) return SampleKind::kInstrumentation;
  switch (state) {
    case CILKPROF_STATE_IDLE:
      return SampleKind::kIdle;
    case CILKPROF_STATE_OVERHEAD:
      return SampleKind::kOverhead;
    default:
      return SampleKind::kWork;  // WORKING, or not a worker: a physical profiler's work
  }
}

}  // namespace cilkprof::agent
