// Unwind() from real signal handlers, in both modes, on known, corrupted and deep
// stacks. The chains live in dwarf_chain.cc (default flags) and fp_chain.cc (frame
// pointers); every check compares recorded pcs against the functions' ELF ranges.
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <gtest/gtest.h>

#include <vector>

#include "cilkprof/unwinder/cursor.h"
#include "cilkprof/unwinder/fault_guard.h"
#include "test_support.h"

namespace cilkprof::unwinder::test {

Capture g_capture;

namespace {

void CaptureHandler(int, siginfo_t*, void* raw_context) {
  const auto* context = static_cast<const ucontext_t*>(raw_context);
  ucontext_t corrupted;
  if (g_capture.corruption != Corruption::kNone) {
    // Both rsp and rbp: the CFA of the interrupted frame is one or the other,
    // depending on whether it was built with frame pointers.
    const auto bad = static_cast<greg_t>(g_capture.corruption == Corruption::kUnmappedStackPointer
                                             ? g_capture.unmapped_page
                                             : g_capture.junk_stack);
    corrupted = *context;
    corrupted.uc_mcontext.gregs[REG_RSP] = bad;
    corrupted.uc_mcontext.gregs[REG_RBP] = bad;
    context = &corrupted;
  }
  g_capture.result = Unwind(g_capture.mode, context, g_capture.frames, g_capture.max_frames);
  g_capture.taken = g_capture.taken + 1;
}

}  // namespace

void InstallCaptureHandler() {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_sigaction = CaptureHandler;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &action, nullptr), 0);
}

namespace {

class UnwinderEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* error = nullptr;
    ASSERT_TRUE(Initialize(&error)) << error;
    PrepareThread();
    InstallCaptureHandler();
  }
};
const auto* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new UnwinderEnvironment);

const char* ModeName(Mode mode) { return mode == Mode::kDwarf ? "dwarf" : "fp"; }

// A page that faults on any access, for the duration of one test.
class ProtNonePages {
 public:
  explicit ProtNonePages(size_t pages = 1) : size_(pages * 4096) {
    base_ = mmap(nullptr, size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  ~ProtNonePages() {
    if (base_ != MAP_FAILED) munmap(base_, size_);
  }
  uintptr_t address() const { return reinterpret_cast<uintptr_t>(base_); }
  bool ok() const { return base_ != MAP_FAILED; }

 private:
  size_t size_;
  void* base_;
};

void ResetCapture(Mode mode, uint32_t max_frames, Corruption corruption = Corruption::kNone) {
  g_capture.mode = mode;
  g_capture.max_frames = max_frames;
  g_capture.corruption = corruption;
  g_capture.result = UnwindResult{};
  memset(g_capture.frames, 0, sizeof(g_capture.frames));
  g_capture.taken = 0;
}

// Runs fp_chain_top(action) on a fresh thread (the chain then ends in start_thread).
void RunFpChainOnThread(int action) {
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, nullptr, fp_chain_thread, &action), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
}

// ---- Known chains --------------------------------------------------------------------

TEST(UnwindFromSignal, DwarfFindsTheKnownChainThroughFramelessCode) {
  ResetCapture(Mode::kDwarf, 256);
  dwarf_chain_top(1);
  ASSERT_EQ(g_capture.taken, 1);
  const UnwindResult& r = g_capture.result;
  EXPECT_FALSE(r.partial);
  EXPECT_FALSE(r.truncated);
  ASSERT_GE(r.depth, 4u);
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(dwarf_chain_leaf)).Contains(g_capture.frames[0].pc));
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(dwarf_chain_mid)).Contains(g_capture.frames[1].pc));
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(dwarf_chain_top)).Contains(g_capture.frames[2].pc));
  // The caller of the chain is this test body, and the walk goes on to main.
  bool saw_main = false;
  for (uint32_t i = 0; i < r.depth; ++i) {
    EXPECT_EQ(g_capture.frames[i].edge, Edge::kCall);
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(g_capture.frames[i].pc), &info) != 0 &&
        info.dli_sname != nullptr && strcmp(info.dli_sname, "main") == 0)
      saw_main = true;
  }
  EXPECT_TRUE(saw_main) << "the DWARF walk did not reach main";
}

TEST(UnwindFromSignal, CallerPcsPointIntoTheCallInstruction) {
  ResetCapture(Mode::kDwarf, 256);
  dwarf_chain_top(1);
  ASSERT_GE(g_capture.result.depth, 3u);
  // frames[1] is a return address minus one: strictly inside mid, never its first byte
  // of the next instruction, and the instruction before it ends at pc + 1.
  const Range mid = FunctionRange(reinterpret_cast<void*>(dwarf_chain_mid));
  EXPECT_GT(g_capture.frames[1].pc, mid.lo);
  EXPECT_LT(g_capture.frames[1].pc, mid.hi);
  // The byte at pc + 1 - 5 is a rel32 call opcode (0xe8): pc + 1 is its return address.
  const auto* call = reinterpret_cast<const uint8_t*>(g_capture.frames[1].pc + 1 - 5);
  EXPECT_EQ(*call, 0xe8);
}

TEST(UnwindFromSignal, FramePointerFindsTheKnownChainAndEndsCleanly) {
  ResetCapture(Mode::kFramePointer, 256);
  RunFpChainOnThread(kFpRaise);
  ASSERT_EQ(g_capture.taken, 1);
  const UnwindResult& r = g_capture.result;
  EXPECT_FALSE(r.partial);
  EXPECT_FALSE(r.truncated);
  ASSERT_GE(r.depth, 4u);
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_leaf)).Contains(g_capture.frames[0].pc));
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_mid)).Contains(g_capture.frames[1].pc));
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_top)).Contains(g_capture.frames[2].pc));
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_thread)).Contains(g_capture.frames[3].pc));
}

TEST(UnwindFromSignal, DwarfAlsoUnwindsFramePointerCode) {
  ResetCapture(Mode::kDwarf, 256);
  RunFpChainOnThread(kFpRaise);
  ASSERT_EQ(g_capture.taken, 1);
  EXPECT_FALSE(g_capture.result.partial);
  ASSERT_GE(g_capture.result.depth, 4u);
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_leaf)).Contains(g_capture.frames[0].pc));
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_mid)).Contains(g_capture.frames[1].pc));
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_top)).Contains(g_capture.frames[2].pc));
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_thread)).Contains(g_capture.frames[3].pc));
}

TEST(UnwindFromSignal, TruncatesAtMaxFramesInBothModes) {
  for (Mode mode : {Mode::kDwarf, Mode::kFramePointer}) {
    SCOPED_TRACE(ModeName(mode));
    ResetCapture(mode, 2);
    RunFpChainOnThread(kFpRaise);
    ASSERT_EQ(g_capture.taken, 1);
    EXPECT_EQ(g_capture.result.depth, 2u);
    EXPECT_TRUE(g_capture.result.truncated);
    EXPECT_FALSE(g_capture.result.partial);
    EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_leaf)).Contains(g_capture.frames[0].pc));
    EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_mid)).Contains(g_capture.frames[1].pc));
  }
}

// ---- Corrupt stacks ------------------------------------------------------------------

TEST(UnwindFromSignal, FramePointerStopsOnASelfLoopWithPartial) {
  ResetCapture(Mode::kFramePointer, 256);
  RunFpChainOnThread(kFpRaiseSelfLoop);
  ASSERT_EQ(g_capture.taken, 1);
  EXPECT_TRUE(g_capture.result.partial);
  EXPECT_FALSE(g_capture.result.truncated);
  // leaf, then mid (the return address is intact), then the looping record stops it.
  ASSERT_EQ(g_capture.result.depth, 2u);
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_leaf)).Contains(g_capture.frames[0].pc));
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_mid)).Contains(g_capture.frames[1].pc));
}

// A fiber-like stack (not the thread's recorded stack) topped by a PROT_NONE page: the
// bounds check cannot reject a frame pointer into the guard page, so reading it faults
// and the fault guard must turn the fault into a partial unwind.
struct FiberRun {
  ucontext_t fiber;
  ucontext_t caller;
};
FiberRun g_fiber_run;

void FiberBody() { fp_chain_top(kFpRaiseIntoGuard); }

TEST(UnwindFromSignal, FramePointerFaultOnAFiberStackIsCaughtAsPartial) {
  constexpr size_t kStackBytes = 256 << 10;
  void* region = mmap(nullptr, kStackBytes + 4096, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(region, MAP_FAILED);
  auto* stack = static_cast<char*>(region);
  ASSERT_EQ(mprotect(stack + kStackBytes, 4096, PROT_NONE), 0);
  fp_guard_page = reinterpret_cast<uintptr_t>(stack + kStackBytes);

  ASSERT_EQ(getcontext(&g_fiber_run.fiber), 0);
  g_fiber_run.fiber.uc_stack.ss_sp = stack;
  g_fiber_run.fiber.uc_stack.ss_size = kStackBytes;
  g_fiber_run.fiber.uc_link = &g_fiber_run.caller;
  makecontext(&g_fiber_run.fiber, FiberBody, 0);

  ResetCapture(Mode::kFramePointer, 256);
  ASSERT_EQ(swapcontext(&g_fiber_run.caller, &g_fiber_run.fiber), 0);
  munmap(region, kStackBytes + 4096);

  ASSERT_EQ(g_capture.taken, 1);
  EXPECT_TRUE(g_capture.result.partial);
  ASSERT_EQ(g_capture.result.depth, 2u);
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_leaf)).Contains(g_capture.frames[0].pc));
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_mid)).Contains(g_capture.frames[1].pc));
}

TEST(UnwindFromSignal, DwarfWithAnUnmappedStackPointerIsPartial) {
  ProtNonePages unmapped(4);
  ASSERT_TRUE(unmapped.ok());
  g_capture.unmapped_page = unmapped.address() + 4096;
  ResetCapture(Mode::kDwarf, 256, Corruption::kUnmappedStackPointer);
  dwarf_chain_top(1);
  ASSERT_EQ(g_capture.taken, 1);
  EXPECT_TRUE(g_capture.result.partial);
  EXPECT_FALSE(g_capture.result.truncated);
  ASSERT_GE(g_capture.result.depth, 1u);
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(dwarf_chain_leaf)).Contains(g_capture.frames[0].pc));
}

TEST(UnwindFromSignal, DwarfOverAJunkStackIsPartial) {
  // Words that are neither code nor mapped: each "return address" read from this
  // stack sends libunwind into unmapped memory or into an address without CFI.
  std::vector<uintptr_t> junk(4096);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (auto& word : junk) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    word = state | 0x8000000000000000ull;  // kernel half: never mapped in user space
  }
  g_capture.junk_stack = reinterpret_cast<uintptr_t>(junk.data() + junk.size() / 2);
  ResetCapture(Mode::kDwarf, 256, Corruption::kJunkStack);
  dwarf_chain_top(1);
  ASSERT_EQ(g_capture.taken, 1);
  EXPECT_TRUE(g_capture.result.partial);
  EXPECT_FALSE(g_capture.result.truncated);
  ASSERT_GE(g_capture.result.depth, 1u);
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(dwarf_chain_leaf)).Contains(g_capture.frames[0].pc));
}

TEST(UnwindFromSignal, FramePointerWithAnUnmappedFramePointerIsPartial) {
  ProtNonePages unmapped(4);
  ASSERT_TRUE(unmapped.ok());
  g_capture.unmapped_page = unmapped.address() + 4096;
  ResetCapture(Mode::kFramePointer, 256, Corruption::kUnmappedStackPointer);
  RunFpChainOnThread(kFpRaise);
  ASSERT_EQ(g_capture.taken, 1);
  // rbp points into unmapped memory: the first frame record read faults.
  EXPECT_TRUE(g_capture.result.partial);
  ASSERT_GE(g_capture.result.depth, 1u);
  EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_leaf)).Contains(g_capture.frames[0].pc));
}

// ---- Interface edges -----------------------------------------------------------------

TEST(Unwind, RejectsMissingArguments) {
  Frame frames[4];
  ucontext_t context;
  ASSERT_EQ(getcontext(&context), 0);
  UnwindResult r = Unwind(Mode::kDwarf, nullptr, frames, 4);
  EXPECT_EQ(r.depth, 0u);
  EXPECT_TRUE(r.partial);
  r = Unwind(Mode::kDwarf, &context, frames, 0);
  EXPECT_EQ(r.depth, 0u);
  EXPECT_TRUE(r.truncated);
}

struct NestedCall {
  ucontext_t context;
  Frame frames[8];
  UnwindResult result;
};

void UnwindWhileGuarded(void* arg) {
  auto* call = static_cast<NestedCall*>(arg);
  call->result = Unwind(Mode::kDwarf, &call->context, call->frames, 8);
}

// A sampling signal may interrupt code that runs guarded outside any handler (an
// OpenMP task's creation-path capture, a lock charge): its own walk nests a guard of
// its own and completes, where it used to be dropped as a partial, empty path.
TEST(Unwind, ANestedUnwindCompletes) {
  NestedCall call;
  ASSERT_EQ(getcontext(&call.context), 0);
  EXPECT_EQ(RunGuarded(UnwindWhileGuarded, &call), GuardOutcome::kCompleted);
  EXPECT_GT(call.result.depth, 0u);
  EXPECT_FALSE(call.result.partial);
  EXPECT_FALSE(InsideGuard());
}

void ReadProtNone(void* arg) {
  const volatile uint8_t* page = static_cast<const volatile uint8_t*>(arg);
  (void)*page;
}

TEST(FaultGuard, TurnsAFaultIntoAnOutcome) {
  ProtNonePages page;
  ASSERT_TRUE(page.ok());
  EXPECT_FALSE(InsideGuard());
  EXPECT_EQ(RunGuarded(ReadProtNone, reinterpret_cast<void*>(page.address())),
            GuardOutcome::kFaulted);
  EXPECT_FALSE(InsideGuard());
  // And the guard is re-armable afterwards.
  EXPECT_EQ(RunGuarded(ReadProtNone, reinterpret_cast<void*>(page.address())),
            GuardOutcome::kFaulted);
}

struct NestedFault {
  uintptr_t page = 0;
  GuardOutcome inner = GuardOutcome::kCompleted;
  bool armed_after_inner = false;
};

void FaultInsideThenOutside(void* arg) {
  auto* nested = static_cast<NestedFault*>(arg);
  nested->inner = RunGuarded(ReadProtNone, reinterpret_cast<void*>(nested->page));
  nested->armed_after_inner = InsideGuard();
  ReadProtNone(reinterpret_cast<void*>(nested->page));  // the outer guard's fault
}

// A fault in a nested guard abandons only the nested function; the guard it interrupted
// stays armed and catches its own fault.
TEST(FaultGuard, NestedGuardsCatchTheirOwnFaults) {
  ProtNonePages page;
  ASSERT_TRUE(page.ok());
  NestedFault nested;
  nested.page = page.address();
  EXPECT_EQ(RunGuarded(FaultInsideThenOutside, &nested), GuardOutcome::kFaulted);
  EXPECT_EQ(nested.inner, GuardOutcome::kFaulted);
  EXPECT_TRUE(nested.armed_after_inner);
  EXPECT_FALSE(InsideGuard());
}

TEST(FaultGuard, OwnsSegvAndBusOnly) {
  EXPECT_TRUE(IsFaultGuardSignal(SIGSEGV));
  EXPECT_TRUE(IsFaultGuardSignal(SIGBUS));
  EXPECT_FALSE(IsFaultGuardSignal(SIGPROF));
  EXPECT_FALSE(IsFaultGuardSignal(SIGUSR1));
}

// ---- Cursors from saved registers (the splicing layer's entry point) ----------------

struct SavedRegsWalk {
  Mode mode;
  cilkprof_saved_regs_t regs;
  uintptr_t pcs[16];
  int count;
  bool ended;
};

template <class Cursor>
void WalkFromSavedRegs(SavedRegsWalk* walk) {
  Cursor cursor;
  if (!cursor.InitFromSavedRegs(walk->regs)) return;
  do {
    walk->pcs[walk->count++] = RecordedPc(cursor);
  } while (walk->count < 16 && cursor.Step() == StepResult::kOk);
}

void GuardedSavedRegsWalk(void* arg) {
  auto* walk = static_cast<SavedRegsWalk*>(arg);
  if (walk->mode == Mode::kDwarf)
    WalkFromSavedRegs<DwarfCursor>(walk);
  else
    WalkFromSavedRegs<FramePointerCursor>(walk);
}

SavedRegsWalk g_saved_walks[2];

// Runs inside fp_chain_leaf, so the frames the saved registers point into are live.
void WalkBothModesFromSavedRegs() {
  for (int i = 0; i < 2; ++i) {
    g_saved_walks[i] = SavedRegsWalk{};
    g_saved_walks[i].mode = i == 0 ? Mode::kDwarf : Mode::kFramePointer;
    g_saved_walks[i].regs = fp_saved_regs;
    RunGuarded(GuardedSavedRegsWalk, &g_saved_walks[i]);
  }
}

TEST(Cursor, StartsFromSavedRegistersInBothModes) {
  fp_leaf_callback = WalkBothModesFromSavedRegs;
  RunFpChainOnThread(kFpCaptureSavedRegs);
  fp_leaf_callback = nullptr;
  for (const SavedRegsWalk& walk : g_saved_walks) {
    SCOPED_TRACE(ModeName(walk.mode));
    // Frame 0 is mid at its call into the leaf (a return address, recorded minus one).
    ASSERT_GE(walk.count, 3);
    EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_mid)).Contains(walk.pcs[0]));
    EXPECT_EQ(walk.pcs[0], walk.regs.pc - 1);
    EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_top)).Contains(walk.pcs[1]));
    EXPECT_TRUE(FunctionRange(reinterpret_cast<void*>(fp_chain_thread)).Contains(walk.pcs[2]));
  }
}

// ---- Sampling a running thread with a CPU-time timer --------------------------------

// Samples whose interrupted pc is in the spin leaf must show the whole chain above it,
// up to the thread's start, complete (partial = false), in both modes.
struct Sampling {
  Mode mode;
  Range leaf, top, entry;
  int wanted;
  timer_t timer;
  SpinArgs* args;
  volatile int in_leaf;   // samples taken in the leaf
  volatile int complete;  // ... that are complete and show leaf -> top -> entry
  volatile int partial;
};
Sampling g_sampling;

void SamplingHandler(int, siginfo_t*, void* raw_context) {
  const auto* context = static_cast<const ucontext_t*>(raw_context);
  if (g_sampling.in_leaf >= g_sampling.wanted) return;
  const uintptr_t pc = static_cast<uintptr_t>(context->uc_mcontext.gregs[REG_RIP]);
  if (!g_sampling.leaf.Contains(pc)) return;
  Frame frames[64];
  const UnwindResult r = Unwind(g_sampling.mode, context, frames, 64);
  g_sampling.in_leaf = g_sampling.in_leaf + 1;
  if (r.partial) g_sampling.partial = g_sampling.partial + 1;
  if (!r.partial && !r.truncated && r.depth >= 3 && g_sampling.leaf.Contains(frames[0].pc) &&
      g_sampling.top.Contains(frames[1].pc) && g_sampling.entry.Contains(frames[2].pc))
    g_sampling.complete = g_sampling.complete + 1;
  if (g_sampling.in_leaf >= g_sampling.wanted) g_sampling.args->stop = 1;
}

void StartSamplingTimer(SpinArgs* args) {
  PrepareThread();
  struct sigevent event;
  memset(&event, 0, sizeof(event));
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = SIGUSR2;
  event._sigev_un._tid = gettid();
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &g_sampling.timer) != 0) {
    args->stop = 1;
    return;
  }
  struct itimerspec period;
  memset(&period, 0, sizeof(period));
  period.it_interval.tv_nsec = 500 * 1000;
  period.it_value.tv_nsec = 500 * 1000;
  timer_settime(g_sampling.timer, 0, &period, nullptr);
}

void StopSamplingTimer(SpinArgs*) { timer_delete(g_sampling.timer); }

void SampleSpinningThread(Mode mode, void* (*thread_fn)(void*), const void* leaf,
                          const void* top) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_sigaction = SamplingHandler;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR2, &action, nullptr), 0);

  SpinArgs args;
  args.start = StartSamplingTimer;
  args.finish = StopSamplingTimer;
  g_sampling = Sampling{};
  g_sampling.mode = mode;
  g_sampling.leaf = FunctionRange(leaf);
  g_sampling.top = FunctionRange(top);
  g_sampling.entry = FunctionRange(reinterpret_cast<const void*>(thread_fn));
  g_sampling.wanted = 60;
  g_sampling.args = &args;
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, nullptr, thread_fn, &args), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  EXPECT_EQ(g_sampling.in_leaf, g_sampling.wanted) << "the CPU-time timer did not fire";
  EXPECT_EQ(g_sampling.partial, 0);
  EXPECT_EQ(g_sampling.complete, g_sampling.in_leaf);
}

TEST(UnwindFromSignal, DwarfSamplesOfASpinningThreadAreComplete) {
  SampleSpinningThread(Mode::kDwarf, dwarf_spin_thread, reinterpret_cast<void*>(dwarf_spin_leaf),
                       reinterpret_cast<void*>(dwarf_spin_top));
}

TEST(UnwindFromSignal, FramePointerSamplesOfASpinningThreadAreComplete) {
  SampleSpinningThread(Mode::kFramePointer, fp_spin_thread,
                       reinterpret_cast<void*>(fp_spin_leaf), reinterpret_cast<void*>(fp_spin_top));
}

}  // namespace
}  // namespace cilkprof::unwinder::test
