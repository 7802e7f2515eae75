// Yama's ptrace_scope refusals of the injector (CheckYamaScope): this kernel has no
// Yama, so the rule is tested apart from the file it reads. Each refusal names the
// setting and says what to do instead.
#include <gtest/gtest.h>

#include <string>

#include "inject/injector.h"

namespace cilkprof::cli::inject {
namespace {

bool Never() { return false; }
bool Always() { return true; }

TEST(YamaScope, NoYamaOrScopeZeroRefusesNothing) {
  EXPECT_TRUE(CheckYamaScope(std::nullopt, false, Never).ok());
  EXPECT_TRUE(CheckYamaScope(0, false, Never).ok());
}

TEST(YamaScope, ScopeOneAllowsAncestorsAndRootOnly) {
  EXPECT_TRUE(CheckYamaScope(1, false, Always).ok());
  EXPECT_TRUE(CheckYamaScope(1, true, Never).ok());
  const Status refused = CheckYamaScope(1, false, Never);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("kernel.yama.ptrace_scope is 1"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("sudo sysctl kernel.yama.ptrace_scope=0"), std::string::npos)
      << refused.message();
}

TEST(YamaScope, ScopeTwoAllowsRootOnlyWhateverTheAncestry) {
  EXPECT_TRUE(CheckYamaScope(2, true, Never).ok());
  const Status refused = CheckYamaScope(2, false, Always);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("kernel.yama.ptrace_scope is 2"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("as root"), std::string::npos) << refused.message();
}

TEST(YamaScope, ScopeThreeRefusesRootTooAndOffersTheStandbyAgent) {
  const Status refused = CheckYamaScope(3, true, Always);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("kernel.yama.ptrace_scope is 3"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("cilkprof run --standby"), std::string::npos) << refused.message();
}

TEST(YamaScope, TheAncestryIsAskedOnlyUnderScopeOne) {
  int asked = 0;
  auto counting = [&asked] {
    ++asked;
    return true;
  };
  CheckYamaScope(0, false, counting);
  CheckYamaScope(2, false, counting);
  CheckYamaScope(3, false, counting);
  CheckYamaScope(1, true, counting);
  EXPECT_EQ(asked, 0);
  CheckYamaScope(1, false, counting);
  EXPECT_EQ(asked, 1);
}

}  // namespace
}  // namespace cilkprof::cli::inject
