// The entry and exit hooks of code compiled with -finstrument-functions: the
// profiler's full call-site mode (docs/WORKSPAN.md "Call sites"). The compiler calls
// these two functions at every entry and exit of an instrumented function; a program
// built that way links them from here, so it runs with or without a tool. With no
// tool attached each call is one load and a predictable branch.
//
// They are async-signal-safe and never instrumented themselves (the library is
// compiled without the flag; the attribute keeps it so if that changes).
#include <atomic>

#include "runtime.hpp"

extern "C" {

__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_enter(void* function,
                                                                                             void* caller) {
  const cilkprof_hooks_t* hooks = cilk::rt::g_function_hooks.load(std::memory_order_acquire);
  CILKPROF_HOOK(hooks, func_enter, function, caller);
}

__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_exit(void* function,
                                                                                            void* caller) {
  const cilkprof_hooks_t* hooks = cilk::rt::g_function_hooks.load(std::memory_order_acquire);
  CILKPROF_HOOK(hooks, func_exit, function, caller);
}

}  // extern "C"
