// The floating-point control state (MXCSR's control bits and the x87 control word:
// rounding modes, exception masks, flush-to-zero, precision) and how stolen work
// gets it.
//
// The runtime's context switch does not carry it (context_switch.hpp: `stmxcsr`
// alone would cost ~4 ns per spawn). A strand that continues on its own thread sees
// the state its child left, exactly as in the serial elision. A worker that resumes
// stolen work first installs the state the entering thread had when it entered the
// runtime (BindRoot), as oneTBB's arenas do for their workers. So code that changes
// the rounding mode inside a parallel region must restore it before its next spawn
// or sync; the state set before entering the runtime holds everywhere.
#ifndef CILK_SRC_FP_CONTROL_HPP_
#define CILK_SRC_FP_CONTROL_HPP_

#include <atomic>
#include <cstdint>

namespace cilk::rt {

class FpControl {
 public:
  // Records the calling thread's control state.
  void Capture() noexcept {
    uint32_t mxcsr;
    uint16_t x87;
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(x87));
    mxcsr_.store(mxcsr & ~kStatusFlags, std::memory_order_relaxed);
    x87_.store(x87, std::memory_order_relaxed);
  }

  // Installs the recorded control state on the calling thread, keeping its sticky
  // exception flags.
  void Install() const noexcept {
    uint32_t mxcsr;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    mxcsr = (mxcsr & kStatusFlags) | mxcsr_.load(std::memory_order_relaxed);
    const uint16_t x87 = x87_.load(std::memory_order_relaxed);
    __asm__ volatile("ldmxcsr %0\n\tfldcw %1" : : "m"(mxcsr), "m"(x87));
  }

 private:
  static constexpr uint32_t kStatusFlags = 0x3f;  // MXCSR bits 0-5: IE DE ZE OE UE PE
  std::atomic<uint32_t> mxcsr_{0x1f80};           // the power-on default
  std::atomic<uint16_t> x87_{0x037f};
};

}  // namespace cilk::rt

#endif  // CILK_SRC_FP_CONTROL_HPP_
