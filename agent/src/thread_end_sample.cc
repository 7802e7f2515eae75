// thread_end_sample.h. Built with frame pointers: this function's frame is frame 0 of
// the context it captures and must be walkable by the frame-pointer unwinder (then it
// is elided, as all of the agent's code is).
#include "thread_end_sample.h"

#include <ucontext.h>

#include "agent_state.h"
#include "blame.h"
#include "signal_mask.h"

namespace cilkprof::agent {

__attribute__((noinline)) void TakeDueSampleAtThreadEnd(ThreadRecord* t, uint64_t weight) {
  ucontext_t context;
  if (getcontext(&context) != 0) return;
  const FaultSignalsOpen faults(&context);  // a fault in the walk must reach the guard
  TakeSample(t, &context, g_handler_mode, weight, /*synchronous=*/true);
}

}  // namespace cilkprof::agent
