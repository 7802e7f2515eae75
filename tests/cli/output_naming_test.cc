// Where `cilkprof run` puts its profiles (issue 12): the checks of -o before the
// program runs, and ProfileNaming when the -o file changes while it runs.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "cilkprof/aggregator/profile_io.h"
#include "output_naming.h"
#include "run_tool.h"

namespace cilkprof::cli {
namespace {

using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

aggregator::ProcessKey Program(uint32_t pid) {
  aggregator::ProcessKey key;
  key.pid = pid;
  key.executable = "/usr/bin/app";
  return key;
}

aggregator::ProcessKey Forked(uint32_t pid, uint32_t sequence) {
  aggregator::ProcessKey key = Program(pid);
  key.sequence = sequence;
  return key;
}

profile::Profile TinyProfile() {
  profile::Profile p;
  p.add_modules();
  p.add_locations();
  p.add_nodes();
  return p;
}

// What the aggregator's writer does with a path: write it, report it.
aggregator::WrittenProfile Write(ProfileNaming& naming, const aggregator::ProcessKey& key) {
  aggregator::WrittenProfile written;
  written.process = key;
  const std::string path = naming.PathFor(key);
  written.status = aggregator::WriteNewProfileFile(path, TinyProfile());
  if (written.status.ok()) written.path = path;
  return written;
}

bool IsFifo(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

TEST(ExplicitOutputProblem, NamesWhatIsThereAndWhatToDo) {
  TempDir dir;
  EXPECT_EQ(ExplicitOutputProblem(dir.File("new.cilkprof"), false), "");
  EXPECT_EQ(ExplicitOutputProblem(dir.File("new.cilkprof"), true), "");

  WriteFile(dir.File("old.cilkprof"), "x");
  EXPECT_EQ(ExplicitOutputProblem(dir.File("old.cilkprof"), true), "");
  EXPECT_EQ(ExplicitOutputProblem(dir.File("old.cilkprof"), false),
            "'" + dir.File("old.cilkprof") + "' already exists; choose another -o FILE, or add -f/--force to replace it");

  for (bool force : {false, true}) {
    EXPECT_EQ(ExplicitOutputProblem("/dev/null", force),
              "will not replace '/dev/null' with a profile: it is a character device, not a regular file; give -o "
              "the name of a regular file or of a new one");
    EXPECT_EQ(ExplicitOutputProblem(dir.path(), force),
              "'" + dir.path() + "' is a directory; give the profile a file name (-o " + dir.path() +
                  "/NAME.cilkprof)");
  }
  ASSERT_EQ(::mkfifo(dir.File("fifo").c_str(), 0644), 0);
  EXPECT_NE(ExplicitOutputProblem(dir.File("fifo"), true).find("it is a FIFO (named pipe)"), std::string::npos);
  ASSERT_EQ(::symlink("old.cilkprof", dir.File("link").c_str()), 0);
  EXPECT_NE(ExplicitOutputProblem(dir.File("link"), true).find("it is a symbolic link"), std::string::npos);

  EXPECT_EQ(ExplicitOutputProblem(dir.File("missing/p.cilkprof"), false),
            "cannot write the profile to '" + dir.File("missing/p.cilkprof") + "': directory '" +
                dir.File("missing") + "' does not exist");
  EXPECT_EQ(ExplicitOutputProblem(dir.File("old.cilkprof/p.cilkprof"), false),
            "cannot write the profile to '" + dir.File("old.cilkprof/p.cilkprof") + "': '" +
                dir.File("old.cilkprof") + "' is not a directory");
}

TEST(ProfileNaming, ForceReplacesARegularFileOnlyOnceTheProfileIsWritten) {
  TempDir dir;
  const std::string target = dir.File("out.cilkprof");
  WriteFile(target, "old profile\n");
  ProfileNaming naming(target, /*force=*/true, "app");
  naming.ProgramStarted(10);
  std::vector<aggregator::WrittenProfile> written = {Write(naming, Program(10))};
  ASSERT_TRUE(written[0].status.ok()) << written[0].status.message();
  EXPECT_EQ(written[0].path, dir.File("out.new.cilkprof"));  // the old file is intact meanwhile
  EXPECT_EQ(ReadFile(target), "old profile\n");
  naming.Settle(&written);
  EXPECT_EQ(written[0].path, target);
  EXPECT_EQ(naming.diversion(), "");
  EXPECT_TRUE(aggregator::ReadProfileFile(target).ok());
  EXPECT_NE(::access(dir.File("out.new.cilkprof").c_str(), F_OK), 0);
}

TEST(ProfileNaming, ForceLeavesAFifoCreatedWhileTheProgramRan) {
  TempDir dir;
  const std::string target = dir.File("out.cilkprof");
  WriteFile(target, "old profile\n");
  ProfileNaming naming(target, /*force=*/true, "app");
  naming.ProgramStarted(10);
  ASSERT_EQ(::unlink(target.c_str()), 0);
  ASSERT_EQ(::mkfifo(target.c_str(), 0644), 0);  // what the program did
  std::vector<aggregator::WrittenProfile> written = {Write(naming, Program(10))};
  naming.Settle(&written);
  EXPECT_TRUE(IsFifo(target));
  EXPECT_EQ(written[0].path, dir.File("out.new.cilkprof"));
  EXPECT_TRUE(aggregator::ReadProfileFile(written[0].path).ok());
  EXPECT_NE(naming.diversion().find("not replaced: it is a FIFO (named pipe)"), std::string::npos)
      << naming.diversion();
}

TEST(ProfileNaming, WithoutForceAFileCreatedMeanwhileIsKeptAndTheProfileGoesBesideIt) {
  TempDir dir;
  const std::string target = dir.File("out.cilkprof");
  ProfileNaming naming(target, /*force=*/false, "app");
  naming.ProgramStarted(10);
  WriteFile(target, "someone else's\n");
  std::vector<aggregator::WrittenProfile> written = {Write(naming, Program(10))};
  naming.Settle(&written);
  EXPECT_EQ(ReadFile(target), "someone else's\n");
  EXPECT_EQ(written[0].path, dir.File("out.10.cilkprof"));
  EXPECT_EQ(naming.diversion(),
            "'" + target + "' was created while the program ran and was left as it is (-f replaces it)");
}

TEST(ProfileNaming, TheProgramIsKnownByItsPidNotByWhoConnectedFirst) {
  TempDir dir;
  ProfileNaming naming(dir.File("out.cilkprof"), /*force=*/false, "app");
  naming.ProgramStarted(10);
  // A process the program forked connected first (sequence 0) and ended first.
  std::vector<aggregator::WrittenProfile> written = {Write(naming, Forked(11, 0)), Write(naming, Forked(10, 1))};
  naming.Settle(&written);
  EXPECT_EQ(written[0].path, dir.File("out.11.cilkprof"));
  EXPECT_EQ(written[1].path, dir.File("out.cilkprof"));
  EXPECT_FALSE(naming.IsProgram(written[0].process));
  EXPECT_TRUE(naming.IsProgram(written[1].process));
  // An image of the program that the collector could not fold into its profile.
  EXPECT_EQ(naming.PathFor(Forked(10, 2)), dir.File("out.10.cilkprof"));
}

TEST(ProfileNaming, ForkedProcessesGoBesideTheMainProfileAndChangeNothing) {
  TempDir dir;
  const std::string target = dir.File("out.cilkprof");
  ProfileNaming naming(target, /*force=*/false, "app");
  naming.ProgramStarted(10);
  std::vector<aggregator::WrittenProfile> written = {Write(naming, Forked(11, 1)), Write(naming, Program(10))};
  naming.Settle(&written);
  EXPECT_EQ(written[0].path, dir.File("out.11.cilkprof"));
  EXPECT_EQ(written[1].path, target);
  EXPECT_EQ(naming.diversion(), "");
}

}  // namespace
}  // namespace cilkprof::cli
