// cilkprofd's own defences, as functions (issue 12, rows 3 and 9): the default
// socket's private directory, and the escaping of its log lines.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "daemon_logging.h"
#include "cilkprof/aggregator/log_escape.h"
#include "socket_directory.h"
#include "temp_dir.h"

namespace cilkprof::daemon {
namespace {

using aggregator::EscapeForLog;
using aggregator::testing::TempDir;

TEST(LogEscapeTest, ClientTextCannotForgeLinesOrDriveTheTerminal) {
  EXPECT_EQ(EscapeForLog("/usr/bin/prog --flag=1"), "/usr/bin/prog --flag=1");
  EXPECT_EQ(EscapeForLog("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(EscapeForLog("x\x1b[2Jy"), "x\\x1b[2Jy");
  EXPECT_EQ(EscapeForLog(std::string("nul\0here", 8)), "nul\\x00here");
  EXPECT_EQ(EscapeForLog("del\x7f"), "del\\x7f");
  EXPECT_EQ(EscapeForLog("back\\slash"), "back\\\\slash");  // an escape is never ambiguous
  // UTF-8 passes; C1 controls (CSI is U+009B), invalid bytes, overlong forms and the
  // characters that reorder or break lines do not.
  EXPECT_EQ(EscapeForLog("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x94\xa5"),
            "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x94\xa5");
  EXPECT_EQ(EscapeForLog("\xc2\x9b" "31m"), "\\xc2\\x9b31m");
  EXPECT_EQ(EscapeForLog("bad\xff\xfe"), "bad\\xff\\xfe");
  EXPECT_EQ(EscapeForLog("\xc0\x8a"), "\\xc0\\x8a");       // an overlong newline
  EXPECT_EQ(EscapeForLog("cut\xe6\x97"), "cut\\xe6\\x97");  // a sequence cut short
  EXPECT_EQ(EscapeForLog("abc\xe2\x80\xae" "fdp.exe"), "abc\\u{202e}fdp.exe");
  EXPECT_EQ(EscapeForLog("line\xe2\x80\xa8sep"), "line\\u{2028}sep");
}

TEST(LogEscapeTest, TheDaemonsSinkEscapesEveryMessage) {
  std::ostringstream out;
  auto sink = MakeEscapingSink(std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  spdlog::logger logger("test", sink);
  logger.set_pattern("[%l] %v");
  logger.info("pid {} ({}) connected", 42, "/tmp/x\n[info] forged line\x1b[31m");
  EXPECT_EQ(out.str(), "[info] pid 42 (/tmp/x\\n[info] forged line\\x1b[31m) connected\n");
}

class SocketDirectoryTest : public ::testing::Test {
 protected:
  std::string Error(const std::string& dir) {
    const Status status = PreparePrivateDirectory(dir);
    return status.ok() ? "" : status.message();
  }
  TempDir parent_;
  std::string dir_ = parent_.File("cilkprof");
};

TEST_F(SocketDirectoryTest, DefaultsToXdgRuntimeDirThenAPerUserDirectoryInTmp) {
  ::setenv("XDG_RUNTIME_DIR", "/run/user/1000", 1);
  EXPECT_EQ(DefaultSocketDirectory(), "/run/user/1000/cilkprof");
  ::unsetenv("XDG_RUNTIME_DIR");
  EXPECT_EQ(DefaultSocketDirectory(), "/tmp/cilkprof-" + std::to_string(::geteuid()));
}

TEST_F(SocketDirectoryTest, CreatesAPrivateDirectoryAndAcceptsItAgain) {
  ASSERT_EQ(Error(dir_), "");
  struct stat st {};
  ASSERT_EQ(::lstat(dir_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ(Error(dir_), "");  // the next start finds it as it left it
}

TEST_F(SocketDirectoryTest, RefusesADirectoryOthersCouldReach) {
  ASSERT_EQ(::mkdir(dir_.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  EXPECT_NE(Error(dir_).find("chmod 700"), std::string::npos) << Error(dir_);
}

TEST_F(SocketDirectoryTest, RefusesASymbolicLinkOrAFile) {
  const std::string elsewhere = parent_.File("elsewhere");
  ASSERT_EQ(::mkdir(elsewhere.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(elsewhere.c_str(), dir_.c_str()), 0);
  EXPECT_NE(Error(dir_).find("is a symbolic link"), std::string::npos) << Error(dir_);
  ASSERT_EQ(::unlink(dir_.c_str()), 0);
  { std::ofstream(dir_) << "x"; }
  EXPECT_NE(Error(dir_).find("is not a directory"), std::string::npos) << Error(dir_);
}

TEST_F(SocketDirectoryTest, RefusesAParentOthersCanWriteWithoutTheStickyBit) {
  ASSERT_EQ(::chmod(parent_.path().c_str(), 0777), 0);
  EXPECT_NE(Error(dir_).find("no sticky bit"), std::string::npos) << Error(dir_);
  ASSERT_EQ(::chmod(parent_.path().c_str(), 01777), 0);  // as /tmp
  EXPECT_EQ(Error(dir_), "");
}

// Another user's directory at the name: it could only be there to intercept.
TEST_F(SocketDirectoryTest, RefusesADirectoryOfAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create a directory of another user";
  ASSERT_EQ(::mkdir(dir_.c_str(), 0700), 0);
  ASSERT_EQ(::chown(dir_.c_str(), 65534, 65534), 0);
  EXPECT_NE(Error(dir_).find("belongs to uid 65534"), std::string::npos) << Error(dir_);
  // Nor an XDG_RUNTIME_DIR of another user (one inherited through sudo).
  ASSERT_EQ(::rmdir(dir_.c_str()), 0);
  ASSERT_EQ(::chown(parent_.path().c_str(), 65534, 65534), 0);
  EXPECT_NE(Error(dir_).find("sudo"), std::string::npos) << Error(dir_);
}

}  // namespace
}  // namespace cilkprof::daemon
