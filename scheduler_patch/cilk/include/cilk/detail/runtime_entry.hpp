// The runtime's entry points used by cilk/cilk.hpp. Not an API: names and layouts
// here may change with the library version.
#ifndef CILK_DETAIL_RUNTIME_ENTRY_HPP_
#define CILK_DETAIL_RUNTIME_ENTRY_HPP_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

#define CILK_DETAIL_API __attribute__((visibility("default")))

namespace cilk {
namespace detail {

// Same layout as boost::context::detail::transfer_t: what a context receives when
// it is switched to.
struct transfer {
  void* fctx;
  void* data;
};

// What a child fiber receives in transfer::data when a spawn hands it a child (the
// runtime's request extends it).
struct spawn_request {
  void* closure;
};

// The runtime's per-scope state; opaque here, laid out by the library.
struct alignas(16) scope_state {
  unsigned char bytes[96];
};

// The function a pooled fiber calls to run one child: fiber_main<Fn, kMove>. It
// returns the child's handle (child_begin's result).
using fiber_entry = void* (*)(transfer);
using child_function = void (*)(void*);

CILK_DETAIL_API void scope_enter(scope_state* scope);
CILK_DETAIL_API void scope_leave(scope_state* scope);
CILK_DETAIL_API void scope_sync(scope_state* scope);
CILK_DETAIL_API bool in_runtime() noexcept;
CILK_DETAIL_API long automatic_grain(unsigned long iterations) noexcept;

// Called by a child fiber once it has its own copy of the callable: publishes the
// parent's continuation for thieves. Returns the child's handle.
CILK_DETAIL_API void* child_begin(transfer from) noexcept;
// Records the exception a child threw in its scope (the first one wins); leaves
// `error` empty.
CILK_DETAIL_API void child_error(void* child, std::exception_ptr& error) noexcept;

}  // namespace detail
}  // namespace cilk

// The spawn entry (spawn_shim.S): records the caller's registers at the call (the
// spawn point) and enters the runtime. Never inlined, never a tail call.
extern "C" CILK_DETAIL_API void cilk_spawn_shim(cilk::detail::scope_state* scope, cilk::detail::fiber_entry entry,
                                                void* closure);

// The only runtime frame between a child fiber's bottom frames and the child's
// code: it calls `function(object)`. It lives in the library's section
// cilk_trampoline_text, whose bounds are every child segment's entry range
// (entry_lo, entry_hi), so a logical unwinder stops at the first frame whose pc is
// inside it. The worker is in state WORKING exactly while `function` runs.
extern "C" CILK_DETAIL_API void cilk_invoke_child(cilk::detail::child_function function, void* object);

namespace cilk {
namespace detail {

// Calls a callable through a type-erased pointer (the generic route).
template <class Fn>
void invoke_erased(void* object) {
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

// The function cilk_invoke_child calls for a callable of type Fn. For a class with
// one non-virtual, argument-less operator() (every lambda given to spawn) it is
// that operator itself: under the Itanium C++ ABI a non-virtual member function is
// a plain function taking `this` first, so the child's own code sits directly on
// the runtime's entry frame with no thunk frame in between. Anything else (function
// pointers, generic or overloaded call operators, results returned in memory) goes
// through invoke_erased<Fn>, which then shows as one extra frame.
template <class Fn>
child_function direct_call() noexcept {
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

// Runs one child on a pooled fiber: copies the callable onto the fiber, publishes
// the parent's continuation, calls the callable, records what it threw. Returns the
// child's handle; the runtime's fiber loop, which called this, then ends the child.
// Frames of a running child, innermost first: the child's code, cilk_invoke_child,
// fiber_main<Fn, kMove>, the runtime's fiber loop, Boost's context start code.
template <class Fn, bool kMove>
[[gnu::noinline]] void* fiber_main(transfer from) noexcept {
  Fn* const source = static_cast<Fn*>(static_cast<spawn_request*>(from.data)->closure);
  std::exception_ptr error;
  void* child = nullptr;
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
      cilk_invoke_child(direct_call<Fn>(), callable);
    } catch (...) {
      if (!error) error = std::current_exception();
    }
    try {
      callable->~Fn();
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) child_error(child, error);
  return child;
}

}  // namespace detail
}  // namespace cilk

#endif  // CILK_DETAIL_RUNTIME_ENTRY_HPP_
