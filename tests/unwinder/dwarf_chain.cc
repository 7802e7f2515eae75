// A known call chain built with the default flags (no frame pointers at -O2).
#include "test_support.h"

CHAIN_FN int dwarf_chain_leaf(int x) {
  cilkprof::unwinder::test::RaiseHere(SIGUSR1);
  return x + 1;
}

CHAIN_FN int dwarf_chain_mid(int x) { return dwarf_chain_leaf(x * 3) + 2; }

CHAIN_FN int dwarf_chain_top(int x) { return dwarf_chain_mid(x + 5) * 7; }

CHAIN_FN void dwarf_spin_leaf(volatile int* stop) {
  while (*stop == 0) {
  }
}

CHAIN_FN void dwarf_spin_top(volatile int* stop) {
  dwarf_spin_leaf(stop);
  asm volatile("" ::: "memory");
}

CHAIN_FN void* dwarf_spin_thread(void* arg) {
  auto* args = static_cast<SpinArgs*>(arg);
  args->start(args);
  dwarf_spin_top(&args->stop);
  args->finish(args);
  return nullptr;
}
