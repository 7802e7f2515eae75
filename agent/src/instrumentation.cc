#include "instrumentation.h"

#include "cilkprof/runtime_abi.h"

namespace cilkprof::agent {

__thread uint32_t tls_instrumentation_depth __attribute__((tls_model("initial-exec"))) = 0;

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
