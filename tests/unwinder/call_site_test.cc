// ClassifyCallBefore() on hand-assembled bytes: direct calls, calls through PLT stubs
// (plain and .plt.sec style) and GOT slots, indirect calls, and no call at all.
#include <gtest/gtest.h>
#include <string.h>

#include <initializer_list>

#include "call_site.h"

namespace cilkprof::unwinder::internal {
namespace {

// A scratch "code" area. Offsets are chosen so that no two encodings overlap.
class Code {
 public:
  Code() { memset(bytes_, 0x90, sizeof(bytes_)); }  // nop
  uintptr_t at(size_t offset) const { return reinterpret_cast<uintptr_t>(bytes_ + offset); }
  void Put(size_t offset, std::initializer_list<uint8_t> b) {
    for (uint8_t v : b) bytes_[offset++] = v;
  }
  // A rel32 at `offset`, relative to the end of the instruction at `next`.
  void PutRel32(size_t offset, size_t next, uintptr_t target) {
    const int32_t rel = static_cast<int32_t>(static_cast<intptr_t>(target - at(next)));
    memcpy(bytes_ + offset, &rel, 4);
  }
  void PutWord(size_t offset, uintptr_t value) { memcpy(bytes_ + offset, &value, 8); }

 private:
  alignas(16) uint8_t bytes_[256];
};

constexpr uintptr_t kFunction = 0x500000;  // a callee the code "jumps" to through slots

TEST(CallSite, DirectCallEntersTheFunctionAtItsTarget) {
  Code code;
  code.Put(16, {0xe8});
  code.PutRel32(17, 21, code.at(100));  // call code+100
  const uintptr_t ra = code.at(21);
  EXPECT_EQ(ClassifyCallBefore(ra, code.at(100)), CallBefore::kCallee);
  EXPECT_EQ(ClassifyCallBefore(ra, code.at(100) + 5000), CallBefore::kCallee);
  EXPECT_EQ(ClassifyCallBefore(ra, code.at(99)), CallBefore::kOtherCallee);
  EXPECT_EQ(ClassifyCallBefore(ra, code.at(100) + kMaxFunctionBytes), CallBefore::kOtherCallee);
  EXPECT_TRUE(FollowsCall(ra));
}

TEST(CallSite, DirectCallThroughAPltStubEntersTheSlotsFunction) {
  Code code;
  code.Put(16, {0xe8});
  code.PutRel32(17, 21, code.at(100));
  code.Put(100, {0xff, 0x25});  // jmp *slot(%rip)
  code.PutRel32(102, 106, code.at(200));
  code.PutWord(200, kFunction);
  const uintptr_t ra = code.at(21);
  EXPECT_EQ(ClassifyCallBefore(ra, kFunction + 0x40), CallBefore::kCallee);
  EXPECT_EQ(ClassifyCallBefore(ra, code.at(101)), CallBefore::kOtherCallee);  // not the stub
}

TEST(CallSite, PltSecStubWithEndbrAndBndPrefix) {
  Code code;
  code.Put(16, {0xe8});
  code.PutRel32(17, 21, code.at(100));
  code.Put(100, {0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25});  // endbr64; bnd jmp *slot(%rip)
  code.PutRel32(107, 111, code.at(200));
  code.PutWord(200, kFunction);
  EXPECT_EQ(ClassifyCallBefore(code.at(21), kFunction), CallBefore::kCallee);
}

TEST(CallSite, CallThroughAGotSlotEntersTheSlotsFunction) {
  Code code;
  code.Put(16, {0xff, 0x15});  // call *slot(%rip) (-fno-plt)
  code.PutRel32(18, 22, code.at(200));
  code.PutWord(200, kFunction);
  const uintptr_t ra = code.at(22);
  EXPECT_EQ(ClassifyCallBefore(ra, kFunction + 1), CallBefore::kCallee);
  EXPECT_EQ(ClassifyCallBefore(ra, kFunction - 1), CallBefore::kOtherCallee);
}

TEST(CallSite, IndirectCallsHaveAnUnknownCallee) {
  Code code;
  code.Put(30, {0xff, 0xd0});  // call *%rax
  EXPECT_EQ(ClassifyCallBefore(code.at(32), kFunction), CallBefore::kIndirect);
  code.Put(60, {0xff, 0x50, 0x08});  // call *8(%rax)
  EXPECT_EQ(ClassifyCallBefore(code.at(63), kFunction), CallBefore::kIndirect);
  code.Put(90, {0xff, 0x94, 0x24, 0x00, 0x01, 0x00, 0x00});  // call *0x100(%rsp)
  EXPECT_EQ(ClassifyCallBefore(code.at(97), kFunction), CallBefore::kIndirect);
  EXPECT_TRUE(FollowsCall(code.at(97)));
}

TEST(CallSite, NoCallBeforeIsNotAReturnAddress) {
  Code code;  // nops only
  EXPECT_EQ(ClassifyCallBefore(code.at(40), code.at(0)), CallBefore::kNone);
  EXPECT_FALSE(FollowsCall(code.at(40)));
  EXPECT_EQ(ClassifyCallBefore(16, 0), CallBefore::kNone);  // a small integer: not read
}

}  // namespace
}  // namespace cilkprof::unwinder::internal
