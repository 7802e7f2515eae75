// Shared helpers for the unwinder tests: known call chains and a signal raised from
// inside them without any libc frame in between.
#pragma once

#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "cilkprof/runtime_abi.h"
#include "cilkprof/unwinder/unwinder.h"

// noipa keeps GCC from inlining, cloning or folding identical chain functions.
#if defined(__clang__)
#define CHAIN_FN extern "C" __attribute__((noinline, optnone))
#else
#define CHAIN_FN extern "C" __attribute__((noinline, noipa))
#endif

namespace cilkprof::unwinder::test {

// Sends `signo` to the calling thread with a raw tgkill system call, so the signal is
// delivered at the instruction after it, in the calling function itself.
inline __attribute__((always_inline)) void RaiseHere(int signo) {
  long pid = getpid();
  long tid = gettid();
  long ret = SYS_tgkill;
  asm volatile("syscall"
               : "+a"(ret)
               : "D"(pid), "S"(tid), "d"(static_cast<long>(signo))
               : "rcx", "r11", "memory");
}

// What the SIGUSR1 handler installed by InstallCaptureHandler() does and records.
enum class Corruption { kNone, kUnmappedStackPointer, kJunkStack };

struct Capture {
  Mode mode = Mode::kDwarf;
  uint32_t max_frames = 0;
  Corruption corruption = Corruption::kNone;
  uintptr_t unmapped_page = 0;  // PROT_NONE page for kUnmappedStackPointer
  uintptr_t junk_stack = 0;     // middle of a buffer of junk words for kJunkStack
  Frame frames[256];
  UnwindResult result;
  volatile int taken = 0;
};
extern Capture g_capture;

// SIGUSR1 -> Unwind(g_capture.mode, context, corrupted as g_capture says).
void InstallCaptureHandler();

// Address range [lo, hi) of the function containing `fn` (from its ELF symbol).
struct Range {
  uintptr_t lo = 0, hi = 0;
  bool Contains(uintptr_t pc) const { return pc >= lo && pc < hi; }
};
Range FunctionRange(const void* fn);

}  // namespace cilkprof::unwinder::test

// The default-flags chain (dwarf_chain.cc).
CHAIN_FN int dwarf_chain_top(int x);
CHAIN_FN int dwarf_chain_mid(int x);
CHAIN_FN int dwarf_chain_leaf(int x);

// The frame-pointer chain (fp_chain.cc, built with -fno-omit-frame-pointer).
enum FpLeafAction {
  kFpRaise,             // raise SIGUSR1 in the leaf
  kFpRaiseSelfLoop,     // ... after pointing the leaf's saved fp at itself
  kFpRaiseIntoGuard,    // ... after pointing the leaf's saved fp at fp_guard_page
  kFpCaptureSavedRegs,  // record mid's registers at its call into the leaf in
                        // fp_saved_regs, then call fp_leaf_callback (if set)
};
extern void (*fp_leaf_callback)();
extern uintptr_t fp_guard_page;
extern cilkprof_saved_regs_t fp_saved_regs;
CHAIN_FN int fp_chain_top(int action);
CHAIN_FN int fp_chain_mid(int action);
CHAIN_FN int fp_chain_leaf(int action);
// Thread entry (pthread start routine) that runs fp_chain_top(*(int*)arg) after
// PrepareThread(); the chain above it ends in start_thread with a null frame pointer.
CHAIN_FN void* fp_chain_thread(void* arg);

// Sampling threads: start(args) (arms a timer), then spin in
// <chain>_spin_top -> <chain>_spin_leaf until args->stop, then finish(args).
struct SpinArgs {
  volatile int stop = 0;
  void (*start)(SpinArgs*) = nullptr;
  void (*finish)(SpinArgs*) = nullptr;
  void* user = nullptr;
};
CHAIN_FN void* fp_spin_thread(void* args);
CHAIN_FN void fp_spin_top(volatile int* stop);
CHAIN_FN void fp_spin_leaf(volatile int* stop);
CHAIN_FN void* dwarf_spin_thread(void* args);
CHAIN_FN void dwarf_spin_top(volatile int* stop);
CHAIN_FN void dwarf_spin_leaf(volatile int* stop);
