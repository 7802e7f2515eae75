// Default profile names: never an existing file, safe characters only.
#include <gtest/gtest.h>

#include <fstream>

#include "cilkprof/aggregator/output_naming.h"
#include "temp_dir.h"

namespace cilkprof::aggregator {
namespace {

TEST(NamingTest, PicksTheFirstFreeName) {
  testing::TempDir dir;
  ProcessKey key;
  key.pid = 42;
  key.executable = "/usr/bin/my app";
  EXPECT_EQ(UniqueProfilePath(dir.path(), key), dir.File("my_app.42.cilkprof"));
  std::ofstream(dir.File("my_app.42.cilkprof")) << "x";
  EXPECT_EQ(UniqueProfilePath(dir.path(), key), dir.File("my_app.42.1.cilkprof"));
  std::ofstream(dir.File("my_app.42.1.cilkprof")) << "x";
  EXPECT_EQ(UniqueProfilePath(dir.path() + "/", key), dir.File("my_app.42.2.cilkprof"));
}

TEST(NamingTest, EmptyExecutableIsProcess) {
  ProcessKey key;
  key.pid = 7;
  EXPECT_EQ(UniqueProfilePath("/nonexistent-dir", key), "/nonexistent-dir/process.7.cilkprof");
  key.executable = "/";
  EXPECT_EQ(UniqueProfilePath("", key), "./process.7.cilkprof");
}

}  // namespace
}  // namespace cilkprof::aggregator
