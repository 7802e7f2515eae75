// The runtime's entry points used by cilk/cilk.hpp. Not an API: names and layouts
// here may change with the library version.
#ifndef CILK_DETAIL_RUNTIME_ENTRY_HPP_
#define CILK_DETAIL_RUNTIME_ENTRY_HPP_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

#define CILK_DETAIL_API __attribute__((visibility("default")))
// The library's inline code is not the user's: with -finstrument-functions (the
// profiler's full call-site mode, docs/WORKSPAN.md) it calls no hooks.
#define CILK_DETAIL_NO_HOOKS __attribute__((no_instrument_function))

namespace cilk {
namespace detail {

// Same layout as boost::context::detail::transfer_t: what a context receives when
// it is switched to.
struct transfer {
  void* fctx;
  void* data;
};

// The part of a scope's state that the inline fast paths below read and write; the
// library's ScopeState begins with it.
struct scope_core {
  // 1 while the scope's strand runs (is not parked at its sync) + children whose
  // continuation was stolen and that have not ended. Reaching 0 means: the strand
  // is parked at its sync and its last child just ended, so that child resumes it.
  std::atomic<std::uint32_t> join;
  // Nonzero: the scope takes the library's paths at sync and exit (the root scope,
  // or a tool is attached); see kScopeSlowPaths.
  std::uint32_t flags;
  // Nonzero once a child recorded an exception for the sync to rethrow.
  std::atomic<std::uint32_t> error_claimed;
  std::uint32_t reserved;
};

// A scope's state: the core, then the library's own fields (opaque here).
struct alignas(16) scope_state {
  scope_core core;
  unsigned char library[80];
};

// scope_core::flags bit of every scope the library constructed (scope_enter).
inline constexpr std::uint32_t kScopeSlowPaths = 1u;

// True on a worker thread of a runtime with no tool attached: then a scope is
// entered, synced and left inline unless a child was stolen or threw. Initial-exec
// TLS (libcilk is loaded at start-up): one %fs-relative load.
extern __thread bool tls_inline_scopes __attribute__((tls_model("initial-exec"), visibility("default")));

// The inline scope entry: false when the library must enter the scope.
[[gnu::always_inline]] CILK_DETAIL_NO_HOOKS inline bool scope_enter_inline(scope_state* scope) noexcept {
  if (__builtin_expect(!tls_inline_scopes, 0)) return false;
  scope->core.join.store(1, std::memory_order_relaxed);
  scope->core.flags = 0;
  scope->core.error_claimed.store(0, std::memory_order_relaxed);
  return true;
}

// True when a sync (or the scope's end) has nothing to do: an inline scope whose
// stolen children have all ended and none of whose children threw.
[[gnu::always_inline]] CILK_DETAIL_NO_HOOKS inline bool scope_synced(scope_state* scope) noexcept {
  return __builtin_expect(scope->core.flags == 0, 1) &&
         __builtin_expect(scope->core.join.load(std::memory_order_acquire) == 1, 1) &&
         __builtin_expect(scope->core.error_claimed.load(std::memory_order_relaxed) == 0, 1);
}

using child_function = void (*)(void*);

// How the runtime runs a child whose callable has type Fn (one constant instance per
// type, child_ops_for<Fn, kMove>). The runtime's entry frame at the bottom of the
// child's fiber makes the child's own copy of the callable, in its frame or, if large
// or over-aligned, on the heap (`construct`, or a copy of size / 8 words when null;
// if the copy cannot be made, the child does not run), publishes the parent's
// continuation, calls direct_call<Fn>() on the copy, then destroys it (`destroy`,
// nothing when null). The adapters are noexcept: what the callable's copy or
// destructor throws is recorded for the sync with child_exception; `construct` then
// returns false.
struct child_ops {
  std::size_t size;
  std::size_t alignment;
  bool (*construct)(void* to, void* from, void* child) noexcept;
  void (*destroy)(void* object, void* child) noexcept;
};

// The library's paths: entering a scope when scope_enter_inline declined; syncing
// or leaving one when scope_synced is false. `caller`: the return address of the
// function the scope is inlined into (its call site, for a profiler's hooks).
CILK_DETAIL_API void scope_enter(scope_state* scope, const void* caller);
CILK_DETAIL_API void scope_leave(scope_state* scope);
CILK_DETAIL_API void scope_sync(scope_state* scope);
CILK_DETAIL_API bool in_runtime() noexcept;
CILK_DETAIL_API long automatic_grain(unsigned long iterations) noexcept;

// Called inside a catch handler: records the exception being handled as the one
// the child's sync rethrows (the first one recorded in the scope wins).
CILK_DETAIL_API void child_exception(void* child) noexcept;

}  // namespace detail
}  // namespace cilk

// The spawn entry (spawn_shim.S): records the caller's registers at the call (the
// spawn point) and enters the runtime, which returns to the caller when the
// parent's continuation resumes (on this worker or a thief). `call` is
// direct_call<Fn>() and `closure` the callable in the caller's frame.
extern "C" CILK_DETAIL_API void cilk_spawn_shim(cilk::detail::scope_state* scope, const cilk::detail::child_ops* ops,
                                                void* closure, cilk::detail::child_function call);

namespace cilk {
namespace detail {

// Calls a callable through a type-erased pointer (the generic route).
template <class Fn>
CILK_DETAIL_NO_HOOKS void invoke_erased(void* object) {
  std::invoke(*static_cast<Fn*>(object));
}

template <class T>
inline constexpr bool kReturnsInRegisters =
    std::is_void_v<T> || std::is_arithmetic_v<T> || std::is_pointer_v<T> || std::is_reference_v<T>;

template <class P>
struct plain_call_operator : std::false_type {};
template <class C, class R>
struct plain_call_operator<R (C::*)()> : std::bool_constant<kReturnsInRegisters<R>> {};
template <class C, class R>
struct plain_call_operator<R (C::*)() const> : std::bool_constant<kReturnsInRegisters<R>> {};
template <class C, class R>
struct plain_call_operator<R (C::*)() noexcept> : std::bool_constant<kReturnsInRegisters<R>> {};
template <class C, class R>
struct plain_call_operator<R (C::*)() const noexcept> : std::bool_constant<kReturnsInRegisters<R>> {};

// The function the runtime's entry frame calls for a callable of type Fn. For a class with
// one non-virtual, argument-less operator() (every lambda given to spawn) it is
// that operator itself: under the Itanium C++ ABI a non-virtual member function is
// a plain function taking `this` first, so the child's own code sits directly on
// the runtime's entry frame with no thunk frame in between. Anything else (function
// pointers, generic or overloaded call operators, results returned in memory) goes
// through invoke_erased<Fn>, which then shows as one extra frame.
template <class Fn>
CILK_DETAIL_NO_HOOKS child_function direct_call() noexcept {
#if defined(__x86_64__) && defined(__GXX_ABI_VERSION)
  if constexpr (requires { &Fn::operator(); }) {
    using Pointer = decltype(&Fn::operator());
    if constexpr (plain_call_operator<Pointer>::value) {
      struct Representation {
        std::uintptr_t pointer;
        std::ptrdiff_t adjustment;
      };
      static_assert(sizeof(Pointer) == sizeof(Representation));
      const Pointer member = &Fn::operator();
      Representation representation;
      std::memcpy(&representation, &member, sizeof(representation));
      if ((representation.pointer & 1) == 0 && representation.adjustment == 0) {
        return reinterpret_cast<child_function>(representation.pointer);
      }
    }
  }
#endif
  return &invoke_erased<Fn>;
}

template <class Fn, bool kMove>
CILK_DETAIL_NO_HOOKS bool construct_child(void* to, void* from, void* child) noexcept {
  if constexpr (std::is_trivially_copyable_v<Fn>) {
    (void)child;
    ::new (to) Fn(*static_cast<const Fn*>(from));  // a few moves, inlined here
    return true;
  } else try {
    if constexpr (kMove) {
      ::new (to) Fn(std::move(*static_cast<Fn*>(from)));
    } else {
      ::new (to) Fn(*static_cast<const Fn*>(from));
    }
    return true;
  } catch (...) {
    child_exception(child);
    return false;
  }
}

template <class Fn>
CILK_DETAIL_NO_HOOKS void destroy_child(void* object, void* child) noexcept {
  try {
    static_cast<Fn*>(object)->~Fn();
  } catch (...) {
    child_exception(child);
  }
}

// A callable the runtime may copy itself, as sizeof(Fn) / 8 <= 8 machine words
// (every lambda capturing a few references or pointers): construct is then null.
template <class Fn>
inline constexpr bool kCopiedAsWords = std::is_trivially_copyable_v<Fn> && sizeof(Fn) % sizeof(void*) == 0 &&
                                       sizeof(Fn) <= 8 * sizeof(void*);

template <class Fn, bool kMove>
inline constexpr child_ops child_ops_for{
    sizeof(Fn),
    alignof(Fn),
    kCopiedAsWords<Fn> ? nullptr : &construct_child<Fn, kMove>,
    std::is_trivially_destructible_v<Fn> ? nullptr : &destroy_child<Fn>,
};

}  // namespace detail
}  // namespace cilk

#endif  // CILK_DETAIL_RUNTIME_ENTRY_HPP_
