// Fiber-switch annotations for AddressSanitizer and ThreadSanitizer. Without those
// sanitizers every function here is an empty inline function.
//
// ASan: before a switch, StartSwitch(target stack); right after control arrives in
// a context (also at a fresh fiber's first instruction), FinishSwitch. A context
// that will never run again passes dying = true so ASan frees its fake stack.
// TSan: every context has a TSan fiber handle; SwitchTo(handle) before the jump.
#ifndef CILK_SRC_SANITIZER_FIBERS_HPP_
#define CILK_SRC_SANITIZER_FIBERS_HPP_

#include <cstddef>
#include <cstdint>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CILK_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define CILK_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CILK_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define CILK_TSAN 1
#endif

#ifdef CILK_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef CILK_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace cilk::rt::sanitizer {

struct SwitchState {
  void* fake_stack = nullptr;
};

inline void StartSwitch(SwitchState* state, bool dying, uintptr_t target_lo, uintptr_t target_hi) {
#ifdef CILK_ASAN
  __sanitizer_start_switch_fiber(dying ? nullptr : &state->fake_stack, reinterpret_cast<const void*>(target_lo),
                                 target_hi - target_lo);
#else
  (void)state, (void)dying, (void)target_lo, (void)target_hi;
#endif
}

inline void FinishSwitch(SwitchState* state) {
#ifdef CILK_ASAN
  __sanitizer_finish_switch_fiber(state != nullptr ? state->fake_stack : nullptr, nullptr, nullptr);
#else
  (void)state;
#endif
}

// [lo, hi) holds no live frame: a stack just mapped, about to be unmapped, or whose
// suspended context is discarded for a new one. ASan must forget the redzones of the
// frames that were there: it poisons a frame's redzones at entry and clears them at
// return, so a context that never returns leaves them poisoned, and GCC 12's libasan
// does not clear the shadow on munmap, so a stack mapped later at the same address
// would inherit them (reported as "unknown-crash" in the new frames).
inline void ForgetFrames(uintptr_t lo, uintptr_t hi) {
#ifdef CILK_ASAN
  __asan_unpoison_memory_region(reinterpret_cast<const volatile void*>(lo), hi - lo);
#else
  (void)lo, (void)hi;
#endif
}

inline void* CreateTsanFiber() {
#ifdef CILK_TSAN
  return __tsan_create_fiber(0);
#else
  return nullptr;
#endif
}

inline void* CurrentTsanFiber() {
#ifdef CILK_TSAN
  return __tsan_get_current_fiber();
#else
  return nullptr;
#endif
}

inline void DestroyTsanFiber(void* fiber) {
#ifdef CILK_TSAN
  if (fiber != nullptr) __tsan_destroy_fiber(fiber);
#else
  (void)fiber;
#endif
}

inline void SwitchTsanFiber(void* fiber) {
#ifdef CILK_TSAN
  __tsan_switch_to_fiber(fiber, 0);
#else
  (void)fiber;
#endif
}

// A TSan fiber whose context was left with frames on its shadow call stack (a
// child's fiber after its last switch away) is replaced by a fresh one, so the
// next context on that stack starts with an empty shadow stack.
inline void RenewTsanFiber(void** fiber) {
#ifdef CILK_TSAN
  if (*fiber != nullptr) __tsan_destroy_fiber(*fiber);
  *fiber = __tsan_create_fiber(0);
#else
  (void)fiber;
#endif
}

}  // namespace cilk::rt::sanitizer

#endif  // CILK_SRC_SANITIZER_FIBERS_HPP_
