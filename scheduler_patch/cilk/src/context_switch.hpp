// Boost.Context's jump_fcontext, entered without disturbing the CPU's return-stack
// predictor.
//
// Why. jump_fcontext saves the callee-saved registers on the current stack, loads
// the target's and resumes it with an indirect `jmp` to the return address that the
// target's own call into jump_fcontext left on its stack. A plain `call
// jump_fcontext` therefore pushes a return-stack-buffer entry that no `ret` ever
// pops, and every return the resumed context makes afterwards is predicted from
// the other context's history: after a spawn the parent's returns (runtime, shim,
// the spawning function, its callers...) would all be mispredicted, costing more
// than the switches themselves. Entering jump_fcontext with push + jmp leaves the
// return address on the stack exactly as a call would (so the stack layout, the
// fcontext format and frame-pointer unwinding are unchanged) but pushes nothing on
// the predictor; the strand that resumes here then returns through its own
// predicted chain, because every call made on the other stack in between was
// matched by its return.
//
// Contract: same as boost::context::detail::jump_fcontext(to, data): returns the
// context that switched back here and the data it passed. Every register that the
// x86-64 System V ABI lets a call clobber is declared clobbered; callee-saved
// registers, MXCSR and the x87 control word are preserved by jump_fcontext itself.
#ifndef CILK_SRC_CONTEXT_SWITCH_HPP_
#define CILK_SRC_CONTEXT_SWITCH_HPP_

#include <boost/context/detail/fcontext.hpp>

namespace cilk::rt {

inline boost::context::detail::transfer_t JumpFcontext(void* to, void* data) noexcept {
#if defined(__x86_64__) && !defined(CILK_PLAIN_JUMP_FCONTEXT)
  void* from_fctx;
  void* from_data;
  __asm__ volatile(
      "leaq -128(%%rsp), %%rsp\n\t"   // step over the red zone the caller may be using
      "leaq 1f(%%rip), %%rax\n\t"
      "pushq %%rax\n\t"               // the return address, as a call would push it
      "jmp jump_fcontext@PLT\n"
      "1:\n\t"
      "leaq 128(%%rsp), %%rsp"
      : "=a"(from_fctx), "=d"(from_data), "+D"(to), "+S"(data)
      :
      : "rcx", "r8", "r9", "r10", "r11", "memory", "cc",
        "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
        "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
#ifdef __AVX512F__
        "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23",
        "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31",
        "k1", "k2", "k3", "k4", "k5", "k6", "k7",
#endif
        "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)", "st(6)", "st(7)");
  return boost::context::detail::transfer_t{from_fctx, from_data};
#else
  return boost::context::detail::jump_fcontext(to, data);
#endif
}

}  // namespace cilk::rt

#endif  // CILK_SRC_CONTEXT_SWITCH_HPP_
