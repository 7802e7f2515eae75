// Writing profiles harms nothing and loses nothing (issue 12): only a regular file is
// ever replaced (a device, FIFO, socket, directory or symbolic link is left as it was,
// never opened), files are created 0600 whatever the umask, and the writer puts a
// profile it cannot write where asked into a fallback directory and says so.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/server.h"
#include "fake_agent.h"
#include "temp_dir.h"

namespace cilkprof::aggregator {
namespace {

using testing::TempDir;

profile::Profile TinyProfile() {
  profile::Profile p;
  p.mutable_process()->set_pid(77);
  p.mutable_process()->set_executable("/usr/bin/app");
  p.add_modules();
  p.add_locations();
  p.add_nodes();
  return p;
}

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct stat Lstat(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st;
}

// Nothing but `expected` in the directory: no temporary file left behind.
void ExpectOnly(const TempDir& dir, std::vector<std::string> expected) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names, expected);
}

// The umask of the test process, set for one scope.
class Umask {
 public:
  explicit Umask(mode_t mask) : old_(::umask(mask)) {}
  ~Umask() { ::umask(old_); }

 private:
  mode_t old_;
};

// Replacing `path` fails, says what is there, and leaves it as it was.
void ExpectNotReplaced(const TempDir& dir, const std::string& name, const std::string& kind) {
  const std::string path = dir.File(name);
  const struct stat before = Lstat(path);
  const Status status = WriteProfileFile(path, TinyProfile());
  ASSERT_FALSE(status.ok()) << name;
  EXPECT_NE(status.message().find("not replaced: it is " + kind + ", not a regular file"), std::string::npos)
      << status.message();
  EXPECT_EQ(NonRegularFileKind(path), kind);
  const struct stat after = Lstat(path);
  EXPECT_EQ(after.st_ino, before.st_ino) << name;
  EXPECT_EQ(after.st_mode, before.st_mode) << name;
  EXPECT_EQ(after.st_rdev, before.st_rdev) << name;
}

TEST(ProfileWriteSafety, NothingButARegularFileIsReplaced) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.File("fifo").c_str(), 0644), 0);
  ASSERT_EQ(::mkdir(dir.File("dir").c_str(), 0755), 0);
  {
    std::ofstream(dir.File("target")) << "kept\n";
  }
  ASSERT_EQ(::symlink("target", dir.File("link").c_str()), 0);
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", dir.File("sock").c_str());
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  std::vector<std::string> names = {"fifo", "dir", "target", "link", "sock"};

  ExpectNotReplaced(dir, "fifo", "a FIFO (named pipe)");
  ExpectNotReplaced(dir, "dir", "a directory");
  ExpectNotReplaced(dir, "link", "a symbolic link");
  ExpectNotReplaced(dir, "sock", "a socket");
  ::close(sock);
  EXPECT_EQ(Contents(dir.File("target")), "kept\n");  // the link's target, untouched
  // As root (CI): a character device like /dev/null, made here.
  if (::mknod(dir.File("null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    ExpectNotReplaced(dir, "null", "a character device");
    names.push_back("null");
  } else {
    EXPECT_NE(::geteuid(), 0u) << "mknod failed as root: " << std::strerror(errno);
  }
  ExpectOnly(dir, names);
}

TEST(ProfileWriteSafety, NewFilesRefuseEverythingThatIsThereEvenADanglingLink) {
  TempDir dir;
  ASSERT_EQ(::symlink(dir.File("elsewhere").c_str(), dir.File("planted").c_str()), 0);
  const Status status = WriteNewProfileFile(dir.File("planted"), TinyProfile());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("already exists", 0), 0u) << status.message();
  EXPECT_NE(::access(dir.File("elsewhere").c_str(), F_OK), 0);  // not created through the link
  ExpectOnly(dir, {"planted"});
}

TEST(ProfileWriteSafety, ProfilesAre0600WhateverTheUmask) {
  TempDir dir;
  Umask open_to_all(0);
  ASSERT_TRUE(WriteNewProfileFile(dir.File("new.cilkprof"), TinyProfile()).ok());
  EXPECT_EQ(Lstat(dir.File("new.cilkprof")).st_mode & 07777, 0600u);
  {
    std::ofstream(dir.File("old.cilkprof")) << "old\n";
  }
  ASSERT_EQ(::chmod(dir.File("old.cilkprof").c_str(), 0644), 0);
  ASSERT_TRUE(WriteProfileFile(dir.File("old.cilkprof"), TinyProfile()).ok());
  EXPECT_EQ(Lstat(dir.File("old.cilkprof")).st_mode & 07777, 0600u);
  EXPECT_TRUE(ReadProfileFile(dir.File("old.cilkprof")).ok());
  ExpectOnly(dir, {"new.cilkprof", "old.cilkprof"});
}

TEST(ProfileWriteSafety, MoveReplacesOnlyARegularFileAndKeepsTheSourceOtherwise) {
  TempDir dir;
  ASSERT_TRUE(WriteNewProfileFile(dir.File("staged"), TinyProfile()).ok());
  ASSERT_EQ(::mkfifo(dir.File("fifo").c_str(), 0644), 0);
  const Status refused = MoveProfileFile(dir.File("staged"), dir.File("fifo"));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("a FIFO (named pipe)"), std::string::npos) << refused.message();
  EXPECT_TRUE(S_ISFIFO(Lstat(dir.File("fifo")).st_mode));
  EXPECT_TRUE(ReadProfileFile(dir.File("staged")).ok());

  {
    std::ofstream(dir.File("regular")) << "old\n";
  }
  ASSERT_TRUE(MoveProfileFile(dir.File("staged"), dir.File("regular")).ok());
  EXPECT_TRUE(ReadProfileFile(dir.File("regular")).ok());
  ExpectOnly(dir, {"fifo", "regular"});
}

TEST(ProfileWriteSafety, NonRegularFileKindIsEmptyForRegularAndMissingFiles) {
  TempDir dir;
  {
    std::ofstream(dir.File("regular")) << "x";
  }
  EXPECT_EQ(NonRegularFileKind(dir.File("regular")), "");
  EXPECT_EQ(NonRegularFileKind(dir.File("missing")), "");
  EXPECT_EQ(NonRegularFileKind("/dev/null"), "a character device");
}

// The writer: a profile that cannot be written where output_path says is written to
// the fallback directory, and WrittenProfile says both why and where.
class FallbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Remember("XDG_CACHE_HOME");
    Remember("TMPDIR");
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  void Remember(const std::string& name) {
    const char* value = std::getenv(name.c_str());
    saved_.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
  }

  // One synthetic agent's profile, asked to go to `asked`.
  std::vector<WrittenProfile> WriteOne(const std::string& asked) {
    AggregatorOptions options;
    options.unix_socket_path = dir_.File("agg.sock");
    options.output_path = [asked](const ProcessKey&) { return asked; };
    auto started = Aggregator::Start(std::move(options), testing::FakeSymbols());
    EXPECT_TRUE(started.ok()) << started.status().message();
    if (!started.ok()) return {};
    {
      testing::ClientSocket client(dir_.File("agg.sock"));
      EXPECT_TRUE(client.connected());
      EXPECT_TRUE(client.Send(testing::Frames(testing::SyntheticAgentStream(4242, 1))));
    }
    return (*started)->Finish(std::chrono::milliseconds(60000));
  }

  TempDir dir_;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(FallbackTest, AnUnwritableDirectoryCostsNoProfile) {
  ::setenv("XDG_CACHE_HOME", dir_.File("cache").c_str(), 1);
  const std::string asked = dir_.File("removed/profile.cilkprof");  // no such directory
  const std::vector<WrittenProfile> written = WriteOne(asked);
  ASSERT_EQ(written.size(), 1u);
  const WrittenProfile& w = written[0];
  EXPECT_FALSE(w.status.ok());
  EXPECT_NE(w.status.message().find(asked), std::string::npos) << w.status.message();
  EXPECT_EQ(w.path, dir_.File("cache/cilkprof/synthetic.4242.cilkprof"));
  EXPECT_EQ(Lstat(dir_.File("cache/cilkprof")).st_mode & 07777, 0700u);
  EXPECT_EQ(Lstat(w.path).st_mode & 07777, 0600u);
  auto read = ReadProfileFile(w.path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->process().pid(), 4242u);
  EXPECT_GT(read->totals().samples(), 0u);
}

TEST_F(FallbackTest, WithoutAUsableCacheDirectoryTheTemporaryDirectoryTakesIt) {
  {
    std::ofstream(dir_.File("not-a-directory")) << "x";
  }
  ::setenv("XDG_CACHE_HOME", dir_.File("not-a-directory").c_str(), 1);
  ASSERT_EQ(::mkdir(dir_.File("tmp").c_str(), 0700), 0);
  ::setenv("TMPDIR", dir_.File("tmp").c_str(), 1);
  {
    std::ofstream(dir_.File("tmp/synthetic.4242.cilkprof")) << "someone else's\n";
  }
  const std::vector<WrittenProfile> written = WriteOne(dir_.File("missing/p.cilkprof"));
  ASSERT_EQ(written.size(), 1u);
  EXPECT_FALSE(written[0].status.ok());
  EXPECT_EQ(written[0].path, dir_.File("tmp/synthetic.4242.1.cilkprof"));  // never over another file
  EXPECT_EQ(Contents(dir_.File("tmp/synthetic.4242.cilkprof")), "someone else's\n");
  EXPECT_TRUE(ReadProfileFile(written[0].path).ok());
}

TEST_F(FallbackTest, AProfileWrittenWhereAskedHasAnOkStatus) {
  ::setenv("XDG_CACHE_HOME", dir_.File("cache").c_str(), 1);
  const std::vector<WrittenProfile> written = WriteOne(dir_.File("here.cilkprof"));
  ASSERT_EQ(written.size(), 1u);
  EXPECT_TRUE(written[0].status.ok()) << written[0].status.message();
  EXPECT_EQ(written[0].path, dir_.File("here.cilkprof"));
  EXPECT_NE(::access(dir_.File("cache").c_str(), F_OK), 0);  // no fallback directory made
}

}  // namespace
}  // namespace cilkprof::aggregator
