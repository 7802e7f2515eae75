// UnwindLogical() on overhead samples that have no strand behind them: when every frame
// is elided (scheduler code only, e.g. a scheduler fiber between strands), the walk is
// complete but records nothing, and the sample must be unattributed, not partial.
#include <ucontext.h>

#include <gtest/gtest.h>

#include "cilkprof/unwinder/logical.h"

namespace cilkprof::unwinder {
namespace {

class Environment : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* error = nullptr;
    ASSERT_TRUE(Initialize(&error)) << error;
    PrepareThread();
  }
};
const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new Environment);

LogicalResult UnwindWithEverythingElided(Mode mode, bool overhead) {
  ucontext_t context;
  EXPECT_EQ(getcontext(&context), 0);
  static const CodeRange kAllCode{0, ~uintptr_t{0}};
  LogicalRequest request;
  request.mode = mode;
  request.context = &context;
  request.overhead = overhead;
  request.elided = &kAllCode;
  request.elided_count = 1;
  request.probe_frameless_leaf = false;  // a getcontext() context
  Frame frames[64];
  return UnwindLogical(request, frames, 64);
}

TEST(LogicalOverhead, AllFramesElidedIsUnattributedInBothModes) {
  for (Mode mode : {Mode::kDwarf, Mode::kFramePointer}) {
    SCOPED_TRACE(mode == Mode::kDwarf ? "dwarf" : "fp");
    const LogicalResult r = UnwindWithEverythingElided(mode, /*overhead=*/true);
    EXPECT_EQ(r.depth, 0u);
    EXPECT_FALSE(r.partial);
    EXPECT_TRUE(r.unattributed);
  }
}

TEST(LogicalOverhead, WorkSamplesAreNeverUnattributed) {
  for (Mode mode : {Mode::kDwarf, Mode::kFramePointer}) {
    SCOPED_TRACE(mode == Mode::kDwarf ? "dwarf" : "fp");
    const LogicalResult r = UnwindWithEverythingElided(mode, /*overhead=*/false);
    EXPECT_EQ(r.depth, 0u);
    EXPECT_FALSE(r.unattributed);
  }
}

}  // namespace
}  // namespace cilkprof::unwinder
