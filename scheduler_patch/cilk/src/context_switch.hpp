// The runtime's context switch: Boost.Context's fcontext format, switched inline,
// without the floating-point control save, and without disturbing the CPU's
// return-stack predictor.
//
// Format. Contexts are made by Boost's make_fcontext and switched in its x86-64
// System V layout: a suspended context's stack holds, from its saved stack pointer,
// [0x00 MXCSR + x87 control word][0x08 r12][0x10 r13][0x18 r14][0x20 r15][0x28 rbx]
// [0x30 rbp][0x38 resume address]. A fresh context from make_fcontext is entered by
// the same switch (its trampoline finds the function in rbx).
//
// Why not Boost's jump_fcontext.
// 1. It saves and restores MXCSR and the x87 control word at every switch, and
//    `stmxcsr` alone costs ~4 ns here: the FP control save was 70% of a switch and
//    ~9 ns of every spawn. This switch leaves the FP control state alone: a strand
//    that continues on the same thread sees the state its child left, exactly as in
//    the serial elision, and a worker installs the entering thread's state before
//    it resumes stolen work (fp_control.hpp; the semantics of oneTBB's arenas).
// 2. It resumes the target with an indirect `jmp` to a return address the target
//    left on its own stack. A plain `call jump_fcontext` pushes a return-stack-buffer
//    entry that no `ret` ever pops, so every return the resumed context made
//    afterwards (the runtime's, the shim's, the spawning function's...) would be
//    predicted from the other context's history: costlier than the switch. Here the
//    resume address is pushed as data (no call), and the strand that resumes later
//    returns through its own predicted chain, because every call made on the other
//    stack in between was matched by its return.
//
// Contract: like boost::context::detail::jump_fcontext(to, data): returns the context
// that switched back here and the data it passed. Every register the x86-64 System V
// ABI lets a call clobber is declared clobbered; the callee-saved ones are saved and
// restored by the switch itself. MXCSR and the x87 control word are NOT switched.
#ifndef CILK_SRC_CONTEXT_SWITCH_HPP_
#define CILK_SRC_CONTEXT_SWITCH_HPP_

#include <boost/context/detail/fcontext.hpp>

namespace cilk::rt {

// Shared by both switches below.
// Suspends the running context in the fcontext layout (see the top of this file):
// steps over the red zone, pushes the resume address (local label 1), and stores the
// six callee-saved registers; rsp is then the context's address. 0x00 (Boost's FP
// control slot) is left unwritten. Clobbers rax.
#define CILK_SAVE_CONTEXT_ASM              \
  "leaq -128(%%rsp), %%rsp\n\t"            \
  "leaq 1f(%%rip), %%rax\n\t"              \
  "pushq %%rax\n\t"                        \
  "leaq -0x38(%%rsp), %%rsp\n\t"           \
  "movq %%r12, 0x08(%%rsp)\n\t"            \
  "movq %%r13, 0x10(%%rsp)\n\t"            \
  "movq %%r14, 0x18(%%rsp)\n\t"            \
  "movq %%r15, 0x20(%%rsp)\n\t"            \
  "movq %%rbx, 0x28(%%rsp)\n\t"            \
  "movq %%rbp, 0x30(%%rsp)\n\t"

// The vector, mask and x87 registers: call-clobbered in the System V ABI, so a
// switch (whose other side may run any code) clobbers them all.
#ifdef __AVX512F__
#define CILK_SWITCH_AVX512_CLOBBERS                                                          \
  "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", \
      "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "k1", "k2", "k3", "k4", "k5", "k6", "k7",
#else
#define CILK_SWITCH_AVX512_CLOBBERS
#endif
#define CILK_SWITCH_VECTOR_CLOBBERS                                                                  \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",   \
      "xmm12", "xmm13", "xmm14", "xmm15", CILK_SWITCH_AVX512_CLOBBERS "st", "st(1)", "st(2)", "st(3)", \
      "st(4)", "st(5)", "st(6)", "st(7)"

inline boost::context::detail::transfer_t JumpFcontext(void* to, void* data) noexcept {
#if defined(__x86_64__)
  void* from_fctx;
  void* from_data;
  __asm__ volatile(
      CILK_SAVE_CONTEXT_ASM
      "movq %%rsp, %%rax\n\t"         // this context, for the target
      "movq %%rdi, %%rsp\n\t"         // the target's stack
      "movq 0x38(%%rsp), %%r8\n\t"
      "movq 0x08(%%rsp), %%r12\n\t"
      "movq 0x10(%%rsp), %%r13\n\t"
      "movq 0x18(%%rsp), %%r14\n\t"
      "movq 0x20(%%rsp), %%r15\n\t"
      "movq 0x28(%%rsp), %%rbx\n\t"
      "movq 0x30(%%rsp), %%rbp\n\t"
      "leaq 0x40(%%rsp), %%rsp\n\t"
      "movq %%rsi, %%rdx\n\t"         // resumed in a switch: (rax, rdx) is its result;
      "movq %%rax, %%rdi\n\t"         // a fresh context: (rdi, rsi) is its argument
      "jmp *%%r8\n"
      "1:\n\t"
      "leaq 128(%%rsp), %%rsp"
      : "=a"(from_fctx), "=d"(from_data), "+D"(to), "+S"(data)
      :
      : "rcx", "r8", "r9", "r10", "r11", "memory", "cc", CILK_SWITCH_VECTOR_CLOBBERS);
  return boost::context::detail::transfer_t{from_fctx, from_data};
#else
#error "cilk: JumpFcontext is implemented for x86-64 only"
#endif
}

// The spawn's switch: suspends the calling context (in the same format as
// JumpFcontext, its address stored in *context_slot before anything else runs, so
// a thief can resume it with JumpFcontext), then calls the child's entry frame,
// cilk_invoke_child(arg0, arg1, arg2, arg3) (hidden alias cilk_rt_child_entry), on
// the stack that ends at `stack_top` (16-byte aligned).
//  - cilk_invoke_child returns when the child ended and its parent was not stolen:
//    the call's own return brings control back here, on the parent's stack with its
//    registers (the callee-saved ones were preserved by the call), and this returns
//    {nullptr, nullptr}. No context is resumed and nothing is predicted wrongly: the
//    call and its return match.
//  - A thief resumes the suspended context instead (JumpFcontext to *context_slot):
//    this returns what it passed, as JumpFcontext would.
// The call instruction itself is cilk_rt_fiber_bottom's (spawn_shim.S), in the
// entry-trampoline section: so the entry frame's return address lies in the entry
// range too, and a frame-pointer walk that skips the entry frame (a sample in the
// child's prologue, before it saved rbp) still stops there. The stub returns here
// through r12.
// Against two full switches (to the child and back), the fast path saves restoring
// six registers twice, the other context's save, and its message.
extern "C" void cilk_rt_fiber_bottom() __attribute__((visibility("hidden")));

inline boost::context::detail::transfer_t SpawnSwitch(void* arg0, void* arg1, void* arg2, void* arg3,
                                                      void** context_slot, void* stack_top) noexcept {
#if defined(__x86_64__)
  register void** slot __asm__("r8") = context_slot;
  register void* top __asm__("r9") = stack_top;
  void* from_fctx;
  void* rdx = arg2;  // in: the third argument; out: the data of a resuming switch
  __asm__ volatile(
      CILK_SAVE_CONTEXT_ASM
      "movq %%rsp, (%%r8)\n\t"        // publishable from here on
      "movq %%rsp, %%rbx\n\t"         // callee-saved: survives the call
      "leaq 2f(%%rip), %%r12\n\t"     // where cilk_rt_fiber_bottom comes back to
      "movq %%r9, %%rsp\n\t"          // the child's stack
      "jmp cilk_rt_fiber_bottom\n"     // call cilk_rt_child_entry; jmp *%r12
      "2:\n\t"
      "movq %%rbx, %%rsp\n\t"         // the child returned: the parent was not stolen
      "movq 0x08(%%rsp), %%r12\n\t"
      "movq 0x28(%%rsp), %%rbx\n\t"
      "leaq 0x40(%%rsp), %%rsp\n\t"
      "xorl %%eax, %%eax\n\t"
      "xorl %%edx, %%edx\n"
      "1:\n\t"
      "leaq 128(%%rsp), %%rsp"
      : "=a"(from_fctx), "+d"(rdx), "+D"(arg0), "+S"(arg1), "+c"(arg3), "+r"(slot), "+r"(top)
      :
      : "r10", "r11", "memory", "cc", CILK_SWITCH_VECTOR_CLOBBERS);
  return boost::context::detail::transfer_t{from_fctx, rdx};
#else
#error "cilk: SpawnSwitch is implemented for x86-64 only"
#endif
}

#undef CILK_SWITCH_VECTOR_CLOBBERS
#undef CILK_SWITCH_AVX512_CLOBBERS
#undef CILK_SAVE_CONTEXT_ASM

}  // namespace cilk::rt

#endif  // CILK_SRC_CONTEXT_SWITCH_HPP_
