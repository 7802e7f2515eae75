// The timeline tool's event table (issue 16; cilkprof/runtime_abi.h, "Scheduling
// events"): cilkprof_runtime_set_events stores it, the steal and sync-wait paths of
// scheduler.cpp read it (CILKPROF_EVENT). Unlike the hooks, events need no quiescent
// moment: each is one self-contained call, so a table installed mid-computation simply
// sees the events from then on.
#include "runtime.hpp"

namespace cilk::rt {

std::atomic<const cilkprof_events_t*> g_events{nullptr};

}  // namespace cilk::rt

extern "C" __attribute__((visibility("default"))) void cilkprof_runtime_set_events(const cilkprof_events_t* events) {
  cilk::rt::g_events.store(events, std::memory_order_release);
}
