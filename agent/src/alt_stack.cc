// The agent's alternate signal stacks (alt_stack.h).
#include "alt_stack.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace cilkprof::agent {
namespace {

// 64 KiB usable, one PROT_NONE guard page below (a handler that overruns it faults
// instead of writing into whatever is mapped there; and leaked stacks could not merge
// into one mapping unnoticed). Measured need (tests/e2e, stack_overflow altstack-use):
// a stack overflow's last flush through the fault guard (the kernel's signal frame,
// FaultHandler, DieWithDefaultAction, CrashFlush with its encoder, the send) uses
// 7,400 bytes on x86-64 with AVX-512. 64 KiB leaves room for what can nest on it: a
// second fault inside the flush (the frame and the guard again), larger signal frames
// (AMX state: AT_MINSIGSTKSZ is 11,952 bytes on such a machine), and the handlers of a
// program or runtime that finds this stack and keeps it instead of installing its own
// (the Cilk runtime's own is 64 KiB, for the same reasons). Pages are touched only when
// a handler uses them (MAP_NORESERVE): a thread that never takes a signal on it pays
// seven system calls (query, map, protect, install; query, disable, unmap), not 64 KiB.
constexpr size_t kUsableBytes = 64u << 10;

size_t PageBytes() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

size_t MappingBytes() { return kUsableBytes + PageBytes(); }

// The agent's mapping this thread owns: its copy survives fork in the child's thread.
__thread void* tls_alt_stack __attribute__((tls_model("initial-exec"))) = nullptr;

void* Usable(void* mapping) { return static_cast<char*>(mapping) + PageBytes(); }

bool RunningOn(void* mapping) {
  const auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  const auto lo = reinterpret_cast<uintptr_t>(mapping);
  return sp >= lo && sp < lo + MappingBytes();
}

}  // namespace

void* ProvideAltStack() {
  if (tls_alt_stack != nullptr) return tls_alt_stack;  // inherited across fork
  stack_t current;
  if (sigaltstack(nullptr, &current) != 0 || (current.ss_flags & SS_DISABLE) == 0) return nullptr;
  void* mapping = mmap(nullptr, MappingBytes(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
  if (mapping == MAP_FAILED) return nullptr;  // a stack overflow then dies without the last flush
  stack_t ours;
  ours.ss_sp = Usable(mapping);
  ours.ss_size = kUsableBytes;
  ours.ss_flags = 0;
  if (mprotect(ours.ss_sp, kUsableBytes, PROT_READ | PROT_WRITE) != 0 || sigaltstack(&ours, nullptr) != 0) {
    munmap(mapping, MappingBytes());
    return nullptr;
  }
  tls_alt_stack = mapping;
  return mapping;
}

void ReleaseAltStack() {
  void* mapping = tls_alt_stack;
  if (mapping == nullptr || RunningOn(mapping)) return;
  stack_t current;
  if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) == 0 &&
      current.ss_sp == Usable(mapping)) {
    stack_t off;
    off.ss_sp = nullptr;
    off.ss_size = 0;
    off.ss_flags = SS_DISABLE;
    if (sigaltstack(&off, nullptr) != 0) return;  // still in use after all: leave it
  }
  tls_alt_stack = nullptr;
  munmap(mapping, MappingBytes());
}

void UnmapInheritedAltStack(void* mapping) {
  if (mapping != nullptr && mapping != tls_alt_stack) munmap(mapping, MappingBytes());
}

}  // namespace cilkprof::agent
