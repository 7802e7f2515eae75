// Frame-pointer mode through frameless code: hand-written functions without a frame
// record (as glibc, libm and libstdc++ are built on Debian) that leave garbage, a small
// integer, a record that only looks right, or their caller's frame pointer in rbp. The
// frame-pointer walk must find the same frames as the DWARF walk of the same context,
// and not end early or partial.
//
// The frameless functions live in .text.unlikely, which GNU ld places before .text, so
// they lie below every framed function here: a record naming a framed callee can never
// pass for theirs by address (the walk's check accepts a callee within 64 KiB below).
#include <string.h>

#include <gtest/gtest.h>

#include "cilkprof/unwinder/unwinder.h"
#include "test_support.h"

extern "C" {
// rbp = rbp_value, then tgkill(pid, tid, signo) from this very frame.
void frameless_raise(uintptr_t rbp_value, long pid, long tid, long signo);
// rbp = rbp_value, then fn(arg).
void frameless_call(void (*fn)(void*), void* arg, uintptr_t rbp_value);
// fn(arg) without touching rbp: the callee's record saves our caller's frame pointer.
void frameless_call_keeping_rbp(void (*fn)(void*), void* arg);
// A pthread start routine with no framed code between start_thread and fn:
// frameless_thread_entry(fn) -> frameless_thread_outer(fn) -> frameless_call
// (rbp = 5) -> fn(nullptr).
void* frameless_thread_entry(void* fn);
}

asm(R"(
    .pushsection .text.unlikely.cilkprof_frameless_test,"ax",@progbits
    .globl frameless_raise
    .type frameless_raise, @function
frameless_raise:
    .cfi_startproc
    pushq %rbp
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %rbp, 0
    movq %rdi, %rbp
    movq %rsi, %rdi
    movq %rdx, %rsi
    movq %rcx, %rdx
    movl $234, %eax
    syscall
    popq %rbp
    .cfi_adjust_cfa_offset -8
    .cfi_restore %rbp
    ret
    .cfi_endproc
    .size frameless_raise, .-frameless_raise

    .globl frameless_call
    .type frameless_call, @function
frameless_call:
    .cfi_startproc
    pushq %rbp
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %rbp, 0
    movq %rdx, %rbp
    movq %rdi, %rax
    movq %rsi, %rdi
    call *%rax
    popq %rbp
    .cfi_adjust_cfa_offset -8
    .cfi_restore %rbp
    ret
    .cfi_endproc
    .size frameless_call, .-frameless_call

    .globl frameless_call_keeping_rbp
    .type frameless_call_keeping_rbp, @function
frameless_call_keeping_rbp:
    .cfi_startproc
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    movq %rdi, %rax
    movq %rsi, %rdi
    call *%rax
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    ret
    .cfi_endproc
    .size frameless_call_keeping_rbp, .-frameless_call_keeping_rbp

    .globl frameless_thread_entry
    .type frameless_thread_entry, @function
frameless_thread_entry:
    .cfi_startproc
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    call frameless_thread_outer
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    xorl %eax, %eax
    ret
    .cfi_endproc
    .size frameless_thread_entry, .-frameless_thread_entry

    .type frameless_thread_outer, @function
frameless_thread_outer:
    .cfi_startproc
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    xorl %esi, %esi
    movl $5, %edx
    call frameless_call
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    ret
    .cfi_endproc
    .size frameless_thread_outer, .-frameless_thread_outer
    .popsection
)");

namespace cilkprof::unwinder::test {
namespace {

struct BothWalks {
  Frame fp[128];
  Frame dwarf[128];
  UnwindResult fp_result, dwarf_result;
  volatile int taken = 0;
};
BothWalks g_walks;

void UnwindBoth(int, siginfo_t*, void* raw_context) {
  const auto* context = static_cast<const ucontext_t*>(raw_context);
  g_walks.fp_result = Unwind(Mode::kFramePointer, context, g_walks.fp, 128);
  g_walks.dwarf_result = Unwind(Mode::kDwarf, context, g_walks.dwarf, 128);
  g_walks.taken = g_walks.taken + 1;
}

class Environment : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* error = nullptr;
    ASSERT_TRUE(Initialize(&error)) << error;
    PrepareThread();
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = UnwindBoth;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    ASSERT_EQ(sigaction(SIGUSR2, &action, nullptr), 0);
  }
};
const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new Environment);

}  // namespace
}  // namespace cilkprof::unwinder::test

using cilkprof::unwinder::test::FunctionRange;
using cilkprof::unwinder::test::g_walks;

// Framed code around the frameless functions (this file is built with frame pointers).
CHAIN_FN void raise_in_callback(void*) { cilkprof::unwinder::test::RaiseHere(SIGUSR2); }

CHAIN_FN void prepare_and_raise(void*) {
  cilkprof::unwinder::PrepareThread();
  cilkprof::unwinder::test::RaiseHere(SIGUSR2);
}

CHAIN_FN uintptr_t return_address_of_this_call() {
  return reinterpret_cast<uintptr_t>(__builtin_return_address(0));
}

CHAIN_FN void framed_caller_of_raise(uintptr_t rbp_value) {
  frameless_raise(rbp_value, getpid(), gettid(), SIGUSR2);
  asm volatile("" ::: "memory");
}

CHAIN_FN void framed_caller_of_call(uintptr_t rbp_value) {
  frameless_call(raise_in_callback, nullptr, rbp_value);
  asm volatile("" ::: "memory");
}

CHAIN_FN void framed_caller_keeping_rbp() {
  frameless_call_keeping_rbp(raise_in_callback, nullptr);
  asm volatile("" ::: "memory");
}

// A frame record in this frame (above the frameless callee's sp, inside the thread's
// stack) whose return address is genuine (it follows a direct call) but whose saved
// frame pointer is junk: an rbp pointing here passes every check but the callee's.
CHAIN_FN void framed_caller_with_fake_record(int through_call) {
  volatile uintptr_t record[2];
  record[0] = 0x123456789a0;  // no mapping, far above any stack
  record[1] = return_address_of_this_call();
  const auto fake = reinterpret_cast<uintptr_t>(&record[0]);
  if (through_call != 0) {
    frameless_call(raise_in_callback, nullptr, fake);
  } else {
    frameless_raise(fake, getpid(), gettid(), SIGUSR2);
  }
  asm volatile("" ::: "memory");
}

namespace {

// The frame-pointer walk is complete and equals the DWARF walk up to where it ends
// (the DWARF walk also records the frameless start-up frames below main).
void ExpectSameFramesAsDwarf(std::initializer_list<const void*> innermost) {
  ASSERT_EQ(g_walks.taken, 1);
  const auto& fp = g_walks.fp_result;
  const auto& dwarf = g_walks.dwarf_result;
  EXPECT_FALSE(dwarf.partial);
  EXPECT_FALSE(fp.partial);
  ASSERT_GE(fp.depth, innermost.size() + 1);
  ASSERT_LE(fp.depth, dwarf.depth);
  EXPECT_LE(dwarf.depth - fp.depth, 2u) << "the frame-pointer walk ended early";
  for (uint32_t i = 0; i < fp.depth; ++i) {
    EXPECT_EQ(g_walks.fp[i].pc, g_walks.dwarf[i].pc) << "frame " << i;
  }
  uint32_t i = 0;
  for (const void* fn : innermost) {
    EXPECT_TRUE(FunctionRange(fn).Contains(g_walks.fp[i].pc)) << "frame " << i;
    ++i;
  }
}

void Reset() { g_walks.taken = 0; }

TEST(FramelessCode, InterruptedWithASmallIntegerInRbp) {
  Reset();
  framed_caller_of_raise(5);
  ExpectSameFramesAsDwarf({reinterpret_cast<void*>(frameless_raise), reinterpret_cast<void*>(framed_caller_of_raise)});
}

TEST(FramelessCode, InterruptedWithAnUnmappedAddressInRbp) {
  Reset();
  framed_caller_of_raise(0x7ff000000000);
  ExpectSameFramesAsDwarf({reinterpret_cast<void*>(frameless_raise), reinterpret_cast<void*>(framed_caller_of_raise)});
}

TEST(FramelessCode, InterruptedWithAPlausibleRecordThatIsNotItsOwn) {
  Reset();
  framed_caller_with_fake_record(0);
  ExpectSameFramesAsDwarf({reinterpret_cast<void*>(frameless_raise),
                           reinterpret_cast<void*>(framed_caller_with_fake_record)});
}

TEST(FramelessCode, MidChainWithASmallIntegerInRbp) {
  Reset();
  framed_caller_of_call(7);
  ExpectSameFramesAsDwarf({reinterpret_cast<void*>(raise_in_callback), reinterpret_cast<void*>(frameless_call),
                           reinterpret_cast<void*>(framed_caller_of_call)});
}

TEST(FramelessCode, MidChainWithAPlausibleRecordThatIsNotItsOwn) {
  Reset();
  framed_caller_with_fake_record(1);
  ExpectSameFramesAsDwarf({reinterpret_cast<void*>(raise_in_callback), reinterpret_cast<void*>(frameless_call),
                           reinterpret_cast<void*>(framed_caller_with_fake_record)});
}

// The callee's record holds framed_caller_keeping_rbp's frame pointer: a genuine record,
// but followed from the frameless frame it would skip framed_caller_keeping_rbp.
TEST(FramelessCode, MidChainKeepingItsCallersFramePointer) {
  Reset();
  framed_caller_keeping_rbp();
  ExpectSameFramesAsDwarf({reinterpret_cast<void*>(raise_in_callback),
                           reinterpret_cast<void*>(frameless_call_keeping_rbp),
                           reinterpret_cast<void*>(framed_caller_keeping_rbp)});
}

// Frameless from start_thread up to the framed callback, whose record holds the small
// integer: the probe's CFI walk meets no framed code before the end of the stack, four
// frames out. That is no end of framed code (main's caller and start_thread have at
// most two frames after them) but frameless code's data: the walk goes on with CFI and
// keeps every frame. A bound of four frames ended the walk at frameless_call (and
// remembered its pc as a chain end, for every later walk).
TEST(FramelessCode, FramelessOutToTheThreadsStartWithASmallIntegerInRbp) {
  Reset();
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, nullptr, frameless_thread_entry, reinterpret_cast<void*>(prepare_and_raise)), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  ExpectSameFramesAsDwarf({reinterpret_cast<void*>(prepare_and_raise)});
  const auto& fp = g_walks.fp_result;
  ASSERT_GE(fp.depth, 4u);
  // frame 1: frameless_call; 2: frameless_thread_outer; 3: frameless_thread_entry.
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(frameless_thread_entry)).Contains(g_walks.fp[3].pc))
      << "the walk ended before the thread's entry";
  EXPECT_EQ(fp.depth, g_walks.dwarf_result.depth) << "the start_thread frames are no end of framed code here";
}

}  // namespace
