// Profile files: round trip, atomic writes, and rejection of damaged files with a
// message that names the file and the problem.
#include <sys/stat.h>

#include <gtest/gtest.h>
#include <google/protobuf/util/message_differencer.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "cilkprof/aggregator/profile_io.h"
#include "temp_dir.h"

namespace cilkprof::aggregator {
namespace {

using testing::TempDir;

profile::Profile SampleProfile() {
  profile::Profile p;
  p.set_format_version(kProfileFormatVersion);
  p.mutable_process()->set_pid(1234);
  p.mutable_process()->set_executable("/usr/bin/app");
  p.mutable_process()->add_argv("app");
  p.mutable_process()->set_end_reason("exit");
  p.add_metrics()->set_name("samples");
  p.add_metrics()->set_name("work");
  p.add_modules();  // unknown
  auto* m = p.add_modules();
  m->set_path("/usr/bin/app");
  m->set_build_id(std::string("\x01\x02\x03", 3));
  p.add_locations();
  for (int i = 1; i <= 2; ++i) {
    auto* loc = p.add_locations();
    loc->set_module(1);
    loc->set_offset(0x100 * i);
    auto* outer = loc->add_frames();
    outer->set_function("main");
    outer->set_file("app.cc");
    outer->set_line(10 + i);
    if (i == 2) {
      auto* inner = loc->add_frames();
      inner->set_function("inlined_helper");
      inner->set_inlined(true);
      inner->set_line(3);
    }
  }
  p.add_nodes();  // root
  auto* a = p.add_nodes();
  a->set_parent(0);
  a->set_location(1);
  a->add_exclusive(1);
  auto* b = p.add_nodes();
  b->set_parent(1);
  b->set_location(2);
  b->set_edge(wire::EDGE_SPAWN);
  b->add_exclusive(3);
  b->add_exclusive(3e6);
  auto* partial = p.add_nodes();
  partial->set_parent(0);
  partial->set_kind(wire::FRAME_PARTIAL_UNWIND);
  auto* t = p.add_threads();
  t->set_tid(99);
  t->set_name("main");
  t->mutable_counters()->set_samples(4);
  p.mutable_totals()->set_samples(4);
  return p;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Both readers, the whole-profile one and the one that streams nodes, reject the file
// with the same message.
void ExpectRejected(const std::string& path, const std::string& needle) {
  auto read = ReadProfileFile(path);
  ASSERT_FALSE(read.ok()) << "expected " << needle;
  const std::string message = read.status().message();
  EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
  EXPECT_NE(message.find(needle), std::string::npos) << message;
  auto streamed = ReadProfileFile(path, [](uint32_t, const profile::Node&) {});
  ASSERT_FALSE(streamed.ok()) << "streaming reader accepted what the reader rejects: " << needle;
  EXPECT_EQ(streamed.status().message(), message);
}

TEST(ProfileIoTest, RoundTripsExactly) {
  TempDir dir;
  const std::string path = dir.File("a.cilkprof");
  const profile::Profile written = SampleProfile();
  ASSERT_TRUE(WriteProfileFile(path, written).ok());
  auto read = ReadProfileFile(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*read, written));
}

TEST(ProfileIoTest, HeaderLayoutIsAsDocumented) {
  const std::string bytes = EncodeProfileFile(SampleProfile());
  ASSERT_GE(bytes.size(), kProfileHeaderBytes);
  EXPECT_EQ(bytes.substr(0, 8), "CILKPROF");
  EXPECT_EQ(bytes[8], 1);  // version 1, little-endian
  uint64_t length = 0, checksum = 0;
  for (int i = 0; i < 8; ++i) length |= uint64_t(uint8_t(bytes[12 + i])) << (8 * i);
  for (int i = 0; i < 8; ++i) checksum |= uint64_t(uint8_t(bytes[20 + i])) << (8 * i);
  EXPECT_EQ(length, bytes.size() - kProfileHeaderBytes);
  EXPECT_EQ(checksum, Fnv1a64(std::string_view(bytes).substr(kProfileHeaderBytes)));
}

TEST(ProfileIoTest, Fnv1aMatchesReferenceVectors) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(ProfileIoTest, WriteLeavesNoTemporaryFiles) {
  TempDir dir;
  ASSERT_TRUE(WriteProfileFile(dir.File("a.cilkprof"), SampleProfile()).ok());
  ASSERT_TRUE(WriteProfileFile(dir.File("a.cilkprof"), SampleProfile()).ok());  // replaces
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename(), "a.cilkprof");
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(ProfileIoTest, WriteNewNeverOverwrites) {
  TempDir dir;
  const std::string path = dir.File("taken.cilkprof");
  Spit(path, "precious");
  const Status status = WriteNewProfileFile(path, SampleProfile());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("already exists", 0), 0u) << status.message();
  EXPECT_EQ(Slurp(path), "precious");
  EXPECT_TRUE(WriteNewProfileFile(dir.File("fresh.cilkprof"), SampleProfile()).ok());
}

TEST(ProfileIoTest, WriteIntoMissingDirectoryFailsWithAdvice) {
  TempDir dir;
  const Status status = WriteProfileFile(dir.File("missing/a.cilkprof"), SampleProfile());
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("directory exists"), std::string::npos) << status.message();
}

TEST(ProfileIoTest, FlippedPayloadByteFailsTheChecksum) {
  TempDir dir;
  const std::string path = dir.File("flip.cilkprof");
  std::string bytes = EncodeProfileFile(SampleProfile());
  bytes[kProfileHeaderBytes + 5] ^= 0x20;
  Spit(path, bytes);
  ExpectRejected(path, "checksum mismatch");
}

TEST(ProfileIoTest, EveryPayloadByteFlipIsDetected) {
  const std::string good = EncodeProfileFile(SampleProfile());
  for (size_t i = kProfileHeaderBytes; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x01;
    EXPECT_FALSE(DecodeProfileFile("x", bad).ok()) << "byte " << i;
  }
}

TEST(ProfileIoTest, CutFileIsTruncatedWithCounts) {
  TempDir dir;
  const std::string path = dir.File("cut.cilkprof");
  const std::string bytes = EncodeProfileFile(SampleProfile());
  const size_t payload = bytes.size() - kProfileHeaderBytes;
  Spit(path, bytes.substr(0, bytes.size() - 10));
  ExpectRejected(path, "truncated (expected " + std::to_string(payload) + " payload bytes, found " +
                           std::to_string(payload - 10) + ")");
  Spit(path, bytes.substr(0, 20));
  ExpectRejected(path, "shorter than the 28-byte header");
  Spit(path, bytes.substr(0, 3));
  ExpectRejected(path, "truncated");
  Spit(path, "");
  ExpectRejected(path, "empty file");
}

TEST(ProfileIoTest, TrailingBytesAreRejected) {
  TempDir dir;
  const std::string path = dir.File("long.cilkprof");
  Spit(path, EncodeProfileFile(SampleProfile()) + "junk");
  ExpectRejected(path, "4 unexpected bytes after");
}

TEST(ProfileIoTest, WrongMagicIsNotAProfile) {
  TempDir dir;
  const std::string path = dir.File("magic.cilkprof");
  std::string bytes = EncodeProfileFile(SampleProfile());
  bytes[0] = 'X';
  Spit(path, bytes);
  ExpectRejected(path, "not a Cilkprof profile");
  Spit(path, "#!/bin/sh\necho hello\n");
  ExpectRejected(path, "not a Cilkprof profile");
}

TEST(ProfileIoTest, FutureVersionAsksForAnUpgrade) {
  TempDir dir;
  const std::string path = dir.File("future.cilkprof");
  std::string bytes = EncodeProfileFile(SampleProfile());
  bytes[8] = 2;
  Spit(path, bytes);
  ExpectRejected(path, "newer Cilkprof (file format version 2; this cilkprof reads version 1); upgrade");
  bytes[8] = 0;
  Spit(path, bytes);
  ExpectRejected(path, "unknown file format version 0");
}

TEST(ProfileIoTest, MissingFileSaysCannotOpen) {
  TempDir dir;
  ExpectRejected(dir.File("absent.cilkprof"), "cannot open");
  ExpectRejected(dir.path(), "not a regular file");
}

TEST(ProfileIoTest, PayloadThatIsNotAProfileIsRejected) {
  // A valid header and checksum around bytes that are not a Profile.
  std::string payload("\xff\xff\xff\xff", 4);
  std::string bytes = "CILKPROF";
  auto put = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes.push_back(char((v >> (8 * i)) & 0xff));
  };
  put(1, 4);
  put(payload.size(), 8);
  put(Fnv1a64(payload), 8);
  bytes += payload;
  auto read = DecodeProfileFile("junk.cilkprof", bytes);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("does not parse"), std::string::npos);
}

// Index integrity: each broken invariant, written with a valid checksum.
void ExpectInconsistent(profile::Profile p, const std::string& needle) {
  auto read = DecodeProfileFile("bad.cilkprof", EncodeProfileFile(p));
  ASSERT_FALSE(read.ok()) << needle;
  EXPECT_NE(read.status().message().find("inconsistent profile"), std::string::npos);
  EXPECT_NE(read.status().message().find(needle), std::string::npos) << read.status().message();
  TempDir dir;
  const std::string path = dir.File("bad.cilkprof");
  Spit(path, EncodeProfileFile(p));
  ExpectRejected(path, needle);
}

// The streaming reader hands over every node, in order, and keeps the rest; the
// tables may come after the nodes (protobuf does not fix field order).
TEST(ProfileIoTest, StreamingReaderHandsOverEveryNodeAndKeepsTheRest) {
  TempDir dir;
  const profile::Profile original = SampleProfile();
  for (bool nodes_first : {false, true}) {
    std::string payload;
    if (nodes_first) {
      profile::Profile nodes_only, rest = original;
      *nodes_only.mutable_nodes() = original.nodes();
      rest.clear_nodes();
      payload = nodes_only.SerializeAsString() + rest.SerializeAsString();
    } else {
      payload = original.SerializeAsString();
    }
    std::string bytes = EncodeProfileFile(original);
    bytes.resize(kProfileHeaderBytes - 16);
    for (uint64_t v : {uint64_t{payload.size()}, Fnv1a64(payload)}) {
      for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    }
    bytes += payload;
    const std::string path = dir.File(nodes_first ? "b.cilkprof" : "a.cilkprof");
    Spit(path, bytes);
    std::vector<profile::Node> nodes;
    auto read = ReadProfileFile(path, [&](uint32_t index, const profile::Node& node) {
      EXPECT_EQ(index, nodes.size());
      nodes.push_back(node);
    });
    ASSERT_TRUE(read.ok()) << read.status().message();
    EXPECT_EQ(read->nodes_size(), 0);
    ASSERT_EQ(nodes.size(), static_cast<size_t>(original.nodes_size()));
    for (size_t i = 0; i < nodes.size(); ++i) {
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(nodes[i], original.nodes(static_cast<int>(i))));
    }
    profile::Profile without_nodes = original;
    without_nodes.clear_nodes();
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*read, without_nodes));
  }
}

TEST(ProfileIoTest, BrokenIndicesAreRejected) {
  {
    auto p = SampleProfile();
    p.mutable_nodes(1)->set_parent(2);
    ExpectInconsistent(p, "node 1 has parent 2, which does not precede it");
  }
  {
    auto p = SampleProfile();
    p.mutable_nodes(2)->set_location(9);
    ExpectInconsistent(p, "node 2 refers to location 9");
  }
  {
    auto p = SampleProfile();
    p.mutable_locations(1)->set_module(5);
    ExpectInconsistent(p, "location 1 refers to module 5");
  }
  {
    auto p = SampleProfile();
    for (int i = 0; i < 3; ++i) p.mutable_nodes(2)->add_exclusive(1);
    ExpectInconsistent(p, "node 2 has 5 metric values, but the profile defines 2");
  }
  {
    auto p = SampleProfile();
    p.mutable_nodes(1)->set_location(0);
    ExpectInconsistent(p, "code node 1 has no location");
  }
  {
    auto p = SampleProfile();
    p.clear_nodes();
    ExpectInconsistent(p, "has no nodes");
  }
  {
    auto p = SampleProfile();
    p.mutable_locations(2)->clear_frames();
    ExpectInconsistent(p, "location 2 has no source frame");
  }
}

// A profile with lock blame (issue 14): a lock's data location shared by a FRAME_LOCK
// leaf and its Profile.locks entry.
profile::Profile LockProfile() {
  profile::Profile p = SampleProfile();
  auto* where = p.add_locations();  // location 3
  where->set_module(1);
  where->set_offset(0x4040);
  where->add_frames()->set_function("g_queue_mutex");
  auto* leaf = p.add_nodes();  // node 4, under node 2
  leaf->set_parent(2);
  leaf->set_kind(wire::FRAME_LOCK);
  leaf->set_location(3);
  auto* lock = p.add_locks();
  lock->set_location(3);
  lock->set_wait_ns(5);
  return p;
}

TEST(ProfileIoTest, LocksRoundTripAndTheirIndicesAreChecked) {
  {
    auto read = DecodeProfileFile("locks.cilkprof", EncodeProfileFile(LockProfile()));
    ASSERT_TRUE(read.ok()) << read.status().message();
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*read, LockProfile()));
  }
  {
    auto p = LockProfile();
    p.mutable_locks(0)->set_location(4);
    ExpectInconsistent(p, "lock 0 refers to location 4, but there are only 4");
  }
  {
    auto p = LockProfile();
    p.mutable_locks(0)->set_location(0);
    ExpectInconsistent(p, "lock 0 refers to location 0");
  }
  {
    auto p = LockProfile();
    p.mutable_locks(0)->set_kind(static_cast<wire::LockKind>(9));
    ExpectInconsistent(p, "lock 0 has an unknown lock kind");
  }
  {
    auto p = LockProfile();
    p.mutable_nodes(4)->set_location(0);
    ExpectInconsistent(p, "lock node 4 has no location");
  }
  {
    auto p = LockProfile();
    auto* child = p.add_nodes();
    child->set_parent(4);
    child->set_location(1);
    ExpectInconsistent(p, "node 5 has lock node 4 as its parent");
  }
}

}  // namespace
}  // namespace cilkprof::aggregator
