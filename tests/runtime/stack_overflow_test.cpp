// A fiber stack overflow stops the program with a message naming CILK_STACK_SIZE.
#include <cilk/cilk.hpp>
#include <gtest/gtest.h>

namespace {

__attribute__((noinline)) int Bottomless(int depth) {  // recursion without end, on purpose
  volatile char frame[512];
  frame[0] = static_cast<char>(depth);
  if (depth < 0) return 0;  // never: keeps -Winfinite-recursion quiet
  return Bottomless(depth + 1) + frame[0];
}

void OverflowInsideAChild() {
  cilk::run([] {
    cilk::scope s;
    s.spawn([] { Bottomless(0); });
  });
}

TEST(StackOverflowDeathTest, MessageNamesCilkStackSize) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(OverflowInsideAChild(), "stack overflow in a fiber.*CILK_STACK_SIZE");
}

}  // namespace
