// `cilkprof run --openmp`: the DT_NEEDED reader and the choice of OpenMP runtime
// (openmp_runtime.h), on a real g++ -fopenmp program.
#include "openmp_runtime.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "elf_needed.h"
#include "run_tool.h"

namespace cilkprof::cli {
namespace {

using testing::TempDir;
using testing::WriteFile;

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(ElfNeeded, ListsTheExecutablesOwnLibraries) {
  const std::vector<std::string> gomp = NeededLibraries(CILKPROF_TEST_GOMP_PROGRAM);
  EXPECT_TRUE(Contains(gomp, "libgomp.so.1"));
  EXPECT_TRUE(Contains(gomp, "libc.so.6"));
  EXPECT_TRUE(LinksLibgomp(gomp));
  const std::vector<std::string> plain = NeededLibraries("/bin/sh");
  EXPECT_TRUE(Contains(plain, "libc.so.6"));
  EXPECT_FALSE(LinksLibgomp(plain));
}

TEST(ElfNeeded, NothingForFilesThatAreNotDynamicElf) {
  TempDir dir;
  WriteFile(dir.File("script"), "#!/bin/sh\nexit 0\n", 0755);
  WriteFile(dir.File("truncated"), std::string("\x7f" "ELF\x02\x01\x01", 7));
  EXPECT_TRUE(NeededLibraries(dir.File("script")).empty());
  EXPECT_TRUE(NeededLibraries(dir.File("truncated")).empty());
  EXPECT_TRUE(NeededLibraries(dir.File("missing")).empty());
}

TEST(OpenMpPlan, AutoWarnsOnceAboutLibgompOnly) {
  TempDir dir;
  const OpenMpPlan gomp = PlanOpenMp("auto", CILKPROF_TEST_GOMP_PROGRAM, "gomp_program", dir.path(), {});
  EXPECT_TRUE(gomp.error.empty());
  EXPECT_TRUE(gomp.library_dir.empty());
  EXPECT_NE(gomp.warning.find("libgomp"), std::string::npos) << gomp.warning;
  EXPECT_NE(gomp.warning.find("--openmp=libomp"), std::string::npos) << gomp.warning;
  EXPECT_TRUE(PlanOpenMp("auto", "/bin/sh", "sh", dir.path(), {}).warning.empty());
  EXPECT_TRUE(PlanOpenMp("off", CILKPROF_TEST_GOMP_PROGRAM, "gomp_program", dir.path(), {}).warning.empty());
}

TEST(OpenMpPlan, LibompMissingNamesThePackage) {
  TempDir dir;
  const OpenMpPlan plan =
      PlanOpenMp("libomp", CILKPROF_TEST_GOMP_PROGRAM, "gomp_program", dir.path(), {dir.File("no/libomp.so.5")});
  EXPECT_NE(plan.error.find("libomp5-14"), std::string::npos) << plan.error;
  EXPECT_TRUE(plan.library_dir.empty());
  EXPECT_NE(::access(dir.File("openmp").c_str(), F_OK), 0);
}

TEST(OpenMpPlan, LibompLinksLibgompNameToIt) {
  TempDir dir;
  WriteFile(dir.File("libomp.so.5"), "stand-in");
  TempDir run_dir;
  const OpenMpPlan plan = PlanOpenMp("libomp", CILKPROF_TEST_GOMP_PROGRAM, "gomp_program", run_dir.path(),
                                     {dir.File("absent.so.5"), dir.File("libomp.so.5")});
  ASSERT_TRUE(plan.error.empty()) << plan.error;
  EXPECT_TRUE(plan.warning.empty());
  EXPECT_EQ(plan.library_dir, run_dir.File("openmp"));
  char target[4096] = {};
  ASSERT_GT(::readlink((plan.library_dir + "/libgomp.so.1").c_str(), target, sizeof target - 1), 0);
  EXPECT_EQ(std::string(target), dir.File("libomp.so.5"));
}

}  // namespace
}  // namespace cilkprof::cli
