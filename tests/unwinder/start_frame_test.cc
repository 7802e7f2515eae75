// UnwindLogical() started at a calling frame (LogicalRequest::start) from a runtime
// entry's frame record (CallerOfFrameRecord), as the OpenMP creation-path capture does
// with OMPT's enter_frame and codeptr_ra: the same frames as a walk from the entry's own
// context that elides the runtime, in both modes; a record whose return address is not
// the one given is refused.
#include <dlfcn.h>
#include <link.h>
#include <ucontext.h>

#include <gtest/gtest.h>

#include "cilkprof/unwinder/logical.h"

#if defined(__clang__)
#define TEST_FN extern "C" __attribute__((noinline, optnone))
#else
#define TEST_FN extern "C" __attribute__((noinline, noipa))
#endif

namespace {

using cilkprof::unwinder::CodeRange;
using cilkprof::unwinder::Frame;
using cilkprof::unwinder::LogicalRequest;
using cilkprof::unwinder::LogicalResult;
using cilkprof::unwinder::Mode;

constexpr uint32_t kMaxFrames = 64;

struct Walks {
  Mode mode = Mode::kDwarf;
  CodeRange runtime;
  bool started = false;  // CallerOfFrameRecord accepted the entry's record
  bool refused_other = false;  // ... and refused it with another return address
  Frame from_start[kMaxFrames];
  LogicalResult start_result;
  Frame from_context[kMaxFrames];
  LogicalResult context_result;
};
Walks g_walks;

}  // namespace

// Plays a runtime entry point (libomp's __kmpc_omp_task): its frame address is what
// libomp stores in enter_frame, its return address what it reports as codeptr_ra.
TEST_FN void runtime_entry() {
  const auto frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  const auto ra = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  int local = 0;
  const auto here = reinterpret_cast<uintptr_t>(&local);
  cilkprof_saved_regs_t regs;
  g_walks.refused_other = !cilkprof::unwinder::CallerOfFrameRecord(frame, ra + 1, here, &regs);
  g_walks.started = cilkprof::unwinder::CallerOfFrameRecord(frame, ra, here, &regs);
  LogicalRequest request;
  request.mode = g_walks.mode;
  request.elided = &g_walks.runtime;
  request.elided_count = 1;
  if (g_walks.started) {
    request.start = &regs;
    g_walks.start_result = cilkprof::unwinder::UnwindLogical(request, g_walks.from_start, kMaxFrames);
  }
  ucontext_t context;
  if (getcontext(&context) != 0) return;
  request.start = nullptr;
  request.context = &context;
  request.probe_frameless_leaf = false;
  g_walks.context_result = cilkprof::unwinder::UnwindLogical(request, g_walks.from_context, kMaxFrames);
}

TEST_FN void creating_code(int depth) {
  if (depth == 0) {
    runtime_entry();
  } else {
    creating_code(depth - 1);
  }
  asm volatile("" ::: "memory");  // no tail call: every level keeps its frame
}

namespace {

CodeRange RangeOf(const void* fn) {
  Dl_info info;
  ElfW(Sym)* symbol = nullptr;
  CodeRange range;
  if (dladdr1(fn, &info, reinterpret_cast<void**>(&symbol), RTLD_DL_SYMENT) != 0 && symbol != nullptr) {
    range.lo = reinterpret_cast<uintptr_t>(info.dli_saddr);
    range.hi = range.lo + symbol->st_size;
  }
  return range;
}

class Environment : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* error = nullptr;
    ASSERT_TRUE(cilkprof::unwinder::Initialize(&error)) << error;
    cilkprof::unwinder::PrepareThread();
  }
};
const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new Environment);

TEST(StartFrame, AWalkFromTheEntrysRecordHasTheFramesOfAWalkFromItsContext) {
  const CodeRange creating = RangeOf(reinterpret_cast<const void*>(&creating_code));
  for (Mode mode : {Mode::kDwarf, Mode::kFramePointer}) {
    SCOPED_TRACE(mode == Mode::kDwarf ? "dwarf" : "fp");
    g_walks = Walks{};
    g_walks.mode = mode;
    g_walks.runtime = RangeOf(reinterpret_cast<const void*>(&runtime_entry));
    ASSERT_LT(g_walks.runtime.lo, g_walks.runtime.hi);
    creating_code(3);
    ASSERT_TRUE(g_walks.started);
    EXPECT_TRUE(g_walks.refused_other);
    const LogicalResult& s = g_walks.start_result;
    const LogicalResult& c = g_walks.context_result;
    EXPECT_FALSE(s.partial);
    EXPECT_FALSE(c.partial);
    ASSERT_GE(s.depth, 5u);  // creating_code x4, the test body, gtest's frames...
    ASSERT_EQ(s.depth, c.depth);
    for (uint32_t i = 0; i < s.depth; ++i) {
      EXPECT_EQ(g_walks.from_start[i].pc, g_walks.from_context[i].pc) << "frame " << i;
    }
    // Frame 0 is the creating code at its call into the entry (return address - 1).
    for (uint32_t i = 0; i < 4; ++i) EXPECT_TRUE(creating.Contains(g_walks.from_start[i].pc)) << "frame " << i;
  }
}

TEST(StartFrame, ImplausibleFramesAreRefusedWithoutReadingThem) {
  int local = 0;
  const auto here = reinterpret_cast<uintptr_t>(&local);
  cilkprof_saved_regs_t regs;
  EXPECT_FALSE(cilkprof::unwinder::CallerOfFrameRecord(here + 1, 0x1234, here, &regs));  // misaligned
  EXPECT_FALSE(cilkprof::unwinder::CallerOfFrameRecord(here - 64, 0x1234, here, &regs));  // below the caller
  EXPECT_FALSE(cilkprof::unwinder::CallerOfFrameRecord(here + (uintptr_t{2} << 20), 0x1234, here, &regs));  // far
  EXPECT_FALSE(cilkprof::unwinder::CallerOfFrameRecord(here, 0, here, &regs));  // no return address
}

}  // namespace
