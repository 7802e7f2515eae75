// ProcessInfo.runtime (issue 13): the runtime the agent attached to, from the Goodbye,
// through an exec chain, and absent when no Goodbye named one.
#include <gtest/gtest.h>

#include "cilkprof/aggregator/session.h"
#include "wire_builders.h"

namespace cilkprof::aggregator {
namespace {

using namespace testing;  // NOLINT: the builders

wire::AgentMessage GoodbyeWithRuntime(const std::string& reason, const std::string& runtime) {
  wire::AgentMessage m = Goodbye(reason);
  m.mutable_goodbye()->set_runtime(runtime);
  return m;
}

profile::Profile Build(const Session& session) {
  FakeSymbolSource symbols;
  return session.BuildProfile(symbols, 4000000000);
}

TEST(ProcessRuntime, CopiedFromTheGoodbye) {
  Session session;
  ASSERT_TRUE(session.Apply(Hello(10)).ok());
  ASSERT_TRUE(session.Apply(GoodbyeWithRuntime("exit", "cilk-model")).ok());
  EXPECT_EQ(Build(session).process().runtime(), "cilk-model");
}

TEST(ProcessRuntime, EmptyWithoutOne) {
  Session plain;
  ASSERT_TRUE(plain.Apply(Hello(10)).ok());
  ASSERT_TRUE(plain.Apply(Goodbye("exit")).ok());
  EXPECT_EQ(Build(plain).process().runtime(), "");
  Session lost;  // no Goodbye: connection lost
  ASSERT_TRUE(lost.Apply(Hello(10)).ok());
  EXPECT_EQ(Build(lost).process().runtime(), "");
}

// A process that ran on the runtime and then exec'd: its profile still says so, even
// when the last image lost its connection; an image that names its own runtime wins.
TEST(ProcessRuntime, AnExecChainKeepsAnEarlierImagesRuntime) {
  Session first;
  ASSERT_TRUE(first.Apply(Hello(10, "/bin/a")).ok());
  ASSERT_TRUE(first.Apply(GoodbyeWithRuntime("exec", "cilk-model")).ok());
  Session second;
  ASSERT_TRUE(second.Apply(Hello(10, "/bin/b")).ok());
  ASSERT_TRUE(second.FoldExecPredecessor(first).ok());
  EXPECT_EQ(Build(second).process().runtime(), "cilk-model");

  Session third;
  ASSERT_TRUE(third.Apply(Hello(10, "/bin/c")).ok());
  ASSERT_TRUE(third.Apply(GoodbyeWithRuntime("exit", "other-runtime")).ok());
  ASSERT_TRUE(third.FoldExecPredecessor(first).ok());
  EXPECT_EQ(Build(third).process().runtime(), "other-runtime");
}

}  // namespace
}  // namespace cilkprof::aggregator
