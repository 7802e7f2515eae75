// Per-thread stack bounds for the frame-pointer cursor's validation.
#include <pthread.h>

#include "cilkprof/unwinder/cursor.h"
#include "internal.h"

namespace cilkprof::unwinder {
namespace {

// Initial-exec TLS: reading it from a signal handler never calls __tls_get_addr (which
// may allocate). The agent is preloaded, so its TLS lives in the static TLS block.
__attribute__((tls_model("initial-exec"))) constinit thread_local StackBounds t_stack{};

}  // namespace

StackBounds CurrentThreadStack() { return t_stack; }

namespace internal {

void RecordThreadStack() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;  // bounds stay unknown
  void* base = nullptr;
  size_t size = 0;
  if (pthread_attr_getstack(&attr, &base, &size) == 0 && base != nullptr && size != 0) {
    StackBounds bounds;
    bounds.lo = reinterpret_cast<uintptr_t>(base);
    bounds.hi = bounds.lo + size;
    t_stack = bounds;
  }
  pthread_attr_destroy(&attr);
}

}  // namespace internal
}  // namespace cilkprof::unwinder
