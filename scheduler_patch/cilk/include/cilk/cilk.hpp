// cilk/cilk.hpp: Cilk fork-join parallelism as a C++ library.
//
//   int fib(int n) {
//     if (n < 2) return n;
//     int x, y;
//     cilk::scope s;                      // a Cilk frame; its destructor syncs
//     s.spawn([&] { x = fib(n - 1); });   // cilk_spawn: the child runs now, the
//                                         // continuation may be stolen
//     y = fib(n - 2);
//     s.sync();                           // cilk_sync: waits for this scope's children
//     return x + y;
//   }
//   cilk::parallel_for(begin, end, [&](long i) { ... });          // cilk_for
//   cilk::parallel_for(begin, end, grain, [&](long i) { ... });
//   int r = cilk::run([&] { return fib(30); });                   // optional
//
// Semantics (those of Cilk): after spawn the calling worker runs the child at once
// and the rest of the calling function (the continuation) is what idle workers
// steal. sync waits for the children spawned through this scope only; a scope's
// destructor syncs. An exception thrown by a child is rethrown by the sync that
// waits for it (if several children throw, the first one recorded wins and the
// others are dropped). The thread that entered the runtime (the first scope on a
// thread that is not a worker, or cilk::run) is the thread that continues after
// the outermost sync, so its thread-local state stays valid there. Between a spawn
// and the sync that follows it, the continuation may run on another thread: do not
// keep addresses of thread_local variables across a spawn or sync.
//
// The callable given to spawn is moved (rvalue) or copied (lvalue) into the child
// before the continuation can be stolen, so a temporary lambda is safe. If that
// copy throws, the child does not run and the sync rethrows.
//
// Floating-point control state (rounding mode, exception masks, flush-to-zero): a
// worker that resumes stolen work installs the state the entering thread had when it
// entered the runtime (as oneTBB's arenas do). Change it before entering, or restore
// it before the next spawn or sync.
//
// Environment (read once, when the runtime starts): CILK_NWORKERS (workers,
// default: the CPUs this process may run on), CILK_STACK_SIZE (bytes per fiber
// stack, suffixes K/M/G, default 1M), CILK_FORCE_STEAL=1 (every continuation is
// resumed by a worker other than the one that ran the child; for tests).
// See docs/RUNTIME.md.
//
// Serial elision: compiled with -DCILK_SERIAL_ELISION this header alone implements
// everything serially (spawn calls the child, sync does nothing, parallel_for is a
// loop, run calls the function). No runtime library is needed; this is the Ts of
// work-efficiency measurements.
#ifndef CILK_CILK_HPP_
#define CILK_CILK_HPP_

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#ifndef CILK_SERIAL_ELISION
#include "cilk/detail/runtime_entry.hpp"
#endif

namespace cilk {

#ifdef CILK_SERIAL_ELISION

// The serial elision of a Cilk frame.
class scope {
 public:
  scope() noexcept = default;
  scope(const scope&) = delete;
  scope& operator=(const scope&) = delete;

  template <class F>
  void spawn(F&& child) {
    std::invoke(std::forward<F>(child));
  }
  void sync() noexcept {}
};

template <class F>
decltype(auto) run(F&& function) {
  return std::invoke(std::forward<F>(function));
}

template <class F>
void parallel_for(long begin, long end, long /*grain*/, F&& body) {
  for (long i = begin; i < end; ++i) body(i);
}

template <class F>
void parallel_for(long begin, long end, F&& body) {
  for (long i = begin; i < end; ++i) body(i);
}

#else  // the parallel runtime

// A Cilk frame: the children spawned through it are synced by sync() and by the
// destructor. Not copyable or movable (its address identifies the frame). A scope
// must be destroyed on the strand that created it, which is automatic for a local.
class scope {
 public:
  // With no tool attached, entering a scope and syncing one whose children all ran
  // on this strand's worker are inline stores and loads; the library is called only
  // when there is work to do (the runtime's first scope, a stolen child still out, a
  // child's exception, a tool's hooks).
  // With a tool attached the library learns this function's own return address: the
  // call site of the function that holds the scope (the thesis' call site).
  [[gnu::always_inline]] CILK_DETAIL_NO_HOOKS scope() {
    if (!detail::scope_enter_inline(&state_)) detail::scope_enter(&state_, __builtin_return_address(0));
  }
  // Syncs. Rethrows a child's exception unless the scope is being left by an
  // exception already, in which case the child's exception is dropped.
  [[gnu::always_inline]] CILK_DETAIL_NO_HOOKS ~scope() noexcept(false) {
    if (!detail::scope_synced(&state_)) detail::scope_leave(&state_);
  }
  scope(const scope&) = delete;
  scope& operator=(const scope&) = delete;

  // cilk_spawn. Always inlined, so the call into the runtime is made from the
  // user's function itself: the spawn point's saved registers (pc, sp, fp,
  // callee-saved) are exactly that function's at its call into the runtime.
  template <class F>
  [[gnu::always_inline]] CILK_DETAIL_NO_HOOKS void spawn(F&& child) {
    using Fn = std::decay_t<F>;
    static_assert(std::is_invocable_v<Fn&>, "cilk::scope::spawn needs a callable taking no arguments");
    constexpr bool kMove = !std::is_lvalue_reference_v<F>;
    if constexpr (std::is_class_v<std::remove_reference_t<F>>) {
      ::cilk_spawn_shim(&state_, &detail::child_ops_for<Fn, kMove>,
                        const_cast<void*>(static_cast<const volatile void*>(std::addressof(child))),
                        detail::direct_call<Fn>());
    } else {
      Fn pointer = child;  // a function or function pointer
      ::cilk_spawn_shim(&state_, &detail::child_ops_for<Fn, false>, &pointer, detail::direct_call<Fn>());
    }
  }

  // cilk_sync: returns when every child spawned through this scope has ended;
  // rethrows the first exception one of them threw.
  [[gnu::always_inline]] CILK_DETAIL_NO_HOOKS void sync() {
    if (!detail::scope_synced(&state_)) detail::scope_sync(&state_);
  }

 private:
  detail::scope_state state_;
};

// Runs `function` inside the runtime and returns its result on the calling
// thread. Inside the runtime already, it just calls `function`. Not inlined, so a
// profiler names the call of cilk::run in the user's function as the computation's
// call site wherever the compiler would have inlined it.
template <class F>
[[gnu::noinline]] CILK_DETAIL_NO_HOOKS decltype(auto) run(F&& function) {
  if (detail::in_runtime()) return std::invoke(std::forward<F>(function));
  scope root;  // binds this thread; its end brings the strand back to this thread
  return std::invoke(std::forward<F>(function));
}

namespace detail {

// Divide and conquer: spawn the left half, continue with the right half, so one
// worker visits indices in increasing order (the serial elision's order) and
// thieves take the largest untouched halves.
template <class F>
CILK_DETAIL_NO_HOOKS void parallel_for_range(long lo, long hi, long grain, F& body) {
  scope s;
  while (static_cast<unsigned long>(hi) - static_cast<unsigned long>(lo) > static_cast<unsigned long>(grain)) {
    const long mid = static_cast<long>(static_cast<unsigned long>(lo) +
                                       (static_cast<unsigned long>(hi) - static_cast<unsigned long>(lo)) / 2);
    s.spawn([&body, lo, mid, grain] { parallel_for_range(lo, mid, grain, body); });
    lo = mid;
  }
  for (long i = lo; i < hi; ++i) body(i);
}

}  // namespace detail

// cilk_for over [begin, end) in chunks of at most `grain` iterations (grain <= 0:
// automatic). Iterations may run in parallel and in any order.
template <class F>
CILK_DETAIL_NO_HOOKS void parallel_for(long begin, long end, long grain, F&& body) {
  if (end <= begin) return;
  const unsigned long n = static_cast<unsigned long>(end) - static_cast<unsigned long>(begin);
  if (grain <= 0) grain = detail::automatic_grain(n);
  run([&] { detail::parallel_for_range(begin, end, grain, body); });
}

// cilk_for with the automatic grain: about 8 chunks per worker, at most 2048
// iterations per chunk (Cilk Plus's rule).
template <class F>
CILK_DETAIL_NO_HOOKS void parallel_for(long begin, long end, F&& body) {
  parallel_for(begin, end, 0L, std::forward<F>(body));
}

#endif  // CILK_SERIAL_ELISION

}  // namespace cilk

#endif  // CILK_CILK_HPP_
