// A known call chain built with -fno-omit-frame-pointer, plus ways to corrupt it.
#include <pthread.h>

#include "test_support.h"

uintptr_t fp_guard_page = 0;
cilkprof_saved_regs_t fp_saved_regs{};
void (*fp_leaf_callback)() = nullptr;

CHAIN_FN int fp_chain_leaf(int action) {
  // This frame's record: [0] = mid's frame pointer, [1] = return address into mid.
  auto* record = static_cast<uintptr_t*>(__builtin_frame_address(0));
  const uintptr_t saved_fp = record[0];
  switch (action) {
    case kFpRaise:
      cilkprof::unwinder::test::RaiseHere(SIGUSR1);
      break;
    case kFpRaiseSelfLoop:
      record[0] = reinterpret_cast<uintptr_t>(record);
      cilkprof::unwinder::test::RaiseHere(SIGUSR1);
      break;
    case kFpRaiseIntoGuard:
      record[0] = fp_guard_page;
      cilkprof::unwinder::test::RaiseHere(SIGUSR1);
      break;
    case kFpCaptureSavedRegs:
      fp_saved_regs = cilkprof_saved_regs_t{};
      fp_saved_regs.pc = record[1];
      fp_saved_regs.fp = record[0];
      fp_saved_regs.sp = reinterpret_cast<uintptr_t>(record + 2);  // mid's sp after the call
      if (fp_leaf_callback != nullptr) fp_leaf_callback();
      break;
  }
  asm volatile("" ::: "memory");
  record[0] = saved_fp;  // restore before the epilogue pops it
  return action + 1;
}

CHAIN_FN int fp_chain_mid(int action) { return fp_chain_leaf(action) + 2; }

CHAIN_FN int fp_chain_top(int action) { return fp_chain_mid(action) * 3; }

CHAIN_FN void* fp_chain_thread(void* arg) {
  cilkprof::unwinder::PrepareThread();
  const int result = fp_chain_top(*static_cast<int*>(arg));
  asm volatile("" ::: "memory");
  return reinterpret_cast<void*>(static_cast<uintptr_t>(result));
}

CHAIN_FN void fp_spin_leaf(volatile int* stop) {
  while (*stop == 0) {
  }
}

CHAIN_FN void fp_spin_top(volatile int* stop) {
  fp_spin_leaf(stop);
  asm volatile("" ::: "memory");
}

CHAIN_FN void* fp_spin_thread(void* arg) {
  auto* args = static_cast<SpinArgs*>(arg);
  args->start(args);
  fp_spin_top(&args->stop);
  args->finish(args);
  return nullptr;
}
