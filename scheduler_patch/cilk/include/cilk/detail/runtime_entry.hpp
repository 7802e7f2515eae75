// The runtime's entry points used by cilk/cilk.hpp. Not an API: names and layouts
// here may change with the library version.
#ifndef CILK_DETAIL_RUNTIME_ENTRY_HPP_
#define CILK_DETAIL_RUNTIME_ENTRY_HPP_

#include <cstddef>
#include <exception>
#include <functional>
#include <new>
#include <utility>

#define CILK_DETAIL_API __attribute__((visibility("default")))

// The section holding every fiber entry function (fiber_main below) of a module.
// The linker defines __start_/__stop_ symbols for it in each module (executable or
// shared object) that spawns; a spawn passes its own module's bounds, which become
// the entry range (entry_lo, entry_hi) of the child's segment for the profiler.
extern "C" const char __start_cilk_trampoline_text[] __attribute__((visibility("hidden")));
extern "C" const char __stop_cilk_trampoline_text[] __attribute__((visibility("hidden")));

namespace cilk {
namespace detail {

// Same layout as boost::context::detail::transfer_t: what a context receives when
// it is switched to.
struct transfer {
  void* fctx;
  void* data;
};

// What a freshly started child fiber receives in transfer::data (the runtime's
// request extends it).
struct spawn_request {
  void* closure;
};

// The runtime's per-scope state; opaque here, laid out by the library.
struct alignas(16) scope_state {
  unsigned char bytes[96];
};

using fiber_entry = void (*)(transfer);

CILK_DETAIL_API void scope_enter(scope_state* scope);
CILK_DETAIL_API void scope_leave(scope_state* scope);
CILK_DETAIL_API void scope_sync(scope_state* scope);
CILK_DETAIL_API bool in_runtime() noexcept;
CILK_DETAIL_API long automatic_grain(unsigned long iterations) noexcept;

// Called by a new child fiber once it has its own copy of the callable: publishes
// the parent's continuation for thieves. Returns the child's handle for child_end.
CILK_DETAIL_API void* child_begin(transfer from) noexcept;
// Ends the child: records `error` (if any) in the scope and leaves the fiber for
// good. `error` is left empty.
[[noreturn]] CILK_DETAIL_API void child_end(void* child, std::exception_ptr& error) noexcept;

}  // namespace detail
}  // namespace cilk

// The spawn entry (spawn_shim.S): records the caller's registers at the call (the
// spawn point) and enters the runtime. Never inlined, never a tail call.
extern "C" CILK_DETAIL_API void cilk_spawn_shim(cilk::detail::scope_state* scope, cilk::detail::fiber_entry entry,
                                                void* closure, const char* entry_lo, const char* entry_hi);

namespace cilk {
namespace detail {

[[gnu::always_inline]] inline const char* module_entry_lo() noexcept { return __start_cilk_trampoline_text; }
[[gnu::always_inline]] inline const char* module_entry_hi() noexcept { return __stop_cilk_trampoline_text; }

// The bottom frame of every child fiber. It lives in section cilk_trampoline_text
// of the spawning module, so a sampled pc inside it means "runtime entry: this
// segment's user frames end here". Hidden so each module uses its own copy.
template <class Fn, bool kMove>
[[gnu::noinline, gnu::section("cilk_trampoline_text"), gnu::visibility("hidden")]] void fiber_main(
    transfer from) noexcept {
  Fn* const source = static_cast<Fn*>(static_cast<spawn_request*>(from.data)->closure);
  std::exception_ptr error;
  void* child = nullptr;
  {
    alignas(Fn) unsigned char storage[sizeof(Fn)];
    Fn* callable = nullptr;
    // Own copy first: once child_begin publishes the continuation, the parent may
    // resume and destroy the original.
    try {
      if constexpr (kMove) {
        callable = ::new (static_cast<void*>(storage)) Fn(std::move(*source));
      } else {
        callable = ::new (static_cast<void*>(storage)) Fn(*source);
      }
    } catch (...) {
      error = std::current_exception();
    }
    child = child_begin(from);
    if (callable != nullptr) {
      try {
        std::invoke(*callable);
      } catch (...) {
        if (!error) error = std::current_exception();
      }
      try {
        callable->~Fn();
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
  }
  child_end(child, error);
}

}  // namespace detail
}  // namespace cilk

#endif  // CILK_DETAIL_RUNTIME_ENTRY_HPP_
