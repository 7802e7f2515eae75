// The profile file format: encoding, decoding and validation (see profile_io.h and
// the header comment of proto/cilkprof/profile.proto).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <cmath>
#include <cstring>

#include "cilkprof/aggregator/profile_io.h"

namespace cilkprof::aggregator {
namespace {

constexpr char kMagic[8] = {'C', 'I', 'L', 'K', 'P', 'R', 'O', 'F'};
constexpr const char* kRerecord = "re-record the profile or restore the file from a copy";

void PutLittleEndian(uint64_t value, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t GetLittleEndian(const char* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  }
  return value;
}

bool ValidEdge(int edge) { return wire::EdgeKind_IsValid(edge); }
bool ValidKind(int kind) { return wire::FrameKind_IsValid(kind); }

// Index integrity: what the views rely on to walk the tree without bounds checks.
Status ValidateIndices(const profile::Profile& p) {
  if (p.modules_size() == 0) return Status::Error("has no module table (modules[0] is required)");
  if (p.locations_size() == 0) {
    return Status::Error("has no location table (locations[0] is required)");
  }
  if (p.nodes_size() == 0) return Status::Error("has no nodes (node 0, the root, is required)");
  for (int i = 1; i < p.locations_size(); ++i) {
    const profile::Location& loc = p.locations(i);
    if (loc.module() >= static_cast<uint32_t>(p.modules_size())) {
      return Status::Error(fmt::format("location {} refers to module {}, but there are only {}",
                                       i, loc.module(), p.modules_size()));
    }
    if (loc.frames_size() == 0) {
      return Status::Error(fmt::format("location {} has no source frame", i));
    }
  }
  const uint32_t metrics = static_cast<uint32_t>(p.metrics_size());
  for (int i = 0; i < p.nodes_size(); ++i) {
    const profile::Node& node = p.nodes(i);
    if (i > 0 && node.parent() >= static_cast<uint32_t>(i)) {
      return Status::Error(fmt::format(
          "node {} has parent {}, which does not precede it (parents must come first)", i,
          node.parent()));
    }
    if (!ValidKind(node.kind()) || !ValidEdge(node.edge())) {
      return Status::Error(fmt::format("node {} has an unknown frame or edge kind", i));
    }
    if (node.location() >= static_cast<uint32_t>(p.locations_size())) {
      return Status::Error(fmt::format("node {} refers to location {}, but there are only {}", i,
                                       node.location(), p.locations_size()));
    }
    if (i > 0 && node.kind() == wire::FRAME_PC && node.location() == 0) {
      return Status::Error(fmt::format("code node {} has no location", i));
    }
    if (static_cast<uint32_t>(node.exclusive_size()) > metrics) {
      return Status::Error(fmt::format("node {} has {} metric values, but the profile defines {}",
                                       i, node.exclusive_size(), metrics));
    }
    for (double v : node.exclusive()) {
      if (!std::isfinite(v)) {
        return Status::Error(fmt::format("node {} has a metric value that is not a number", i));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string EncodeProfileFile(const profile::Profile& profile) {
  std::string payload;
  if (profile.format_version() == kProfileFormatVersion) {
    profile.SerializeToString(&payload);
  } else {
    profile::Profile copy = profile;
    copy.set_format_version(kProfileFormatVersion);
    copy.SerializeToString(&payload);
  }
  std::string file;
  file.reserve(kProfileHeaderBytes + payload.size());
  file.append(kMagic, sizeof kMagic);
  PutLittleEndian(kProfileFormatVersion, 4, &file);
  PutLittleEndian(payload.size(), 8, &file);
  PutLittleEndian(Fnv1a64(payload), 8, &file);
  file.append(payload);
  return file;
}

Result<profile::Profile> DecodeProfileFile(const std::string& name, std::string_view bytes) {
  auto error = [&](const std::string& what) { return Status::Error(name + ": " + what); };
  if (bytes.empty()) {
    return error("empty file (0 bytes); the profile was not written; re-record it");
  }
  const size_t prefix = std::min(bytes.size(), sizeof kMagic);
  if (std::memcmp(bytes.data(), kMagic, prefix) != 0) {
    return error(
        "not a Cilkprof profile (it does not start with the magic \"CILKPROF\"); pass a "
        ".cilkprof file written by cilkprof-run or cilkprofd");
  }
  if (bytes.size() < kProfileHeaderBytes) {
    return error(fmt::format(
        "truncated (the file has {} bytes, shorter than the {}-byte header); the profile was "
        "not completely written; re-record it",
        bytes.size(), kProfileHeaderBytes));
  }
  const uint32_t version = static_cast<uint32_t>(GetLittleEndian(bytes.data() + 8, 4));
  if (version > kProfileFormatVersion) {
    return error(fmt::format(
        "written by a newer Cilkprof (file format version {}; this cilkprof reads version {}); "
        "upgrade cilkprof to read it",
        version, kProfileFormatVersion));
  }
  if (version == 0) {
    return error(fmt::format("unknown file format version 0; the file is damaged; {}", kRerecord));
  }
  const uint64_t length = GetLittleEndian(bytes.data() + 12, 8);
  const uint64_t checksum = GetLittleEndian(bytes.data() + 20, 8);
  const uint64_t found = bytes.size() - kProfileHeaderBytes;
  if (found < length) {
    return error(fmt::format(
        "truncated (expected {} payload bytes, found {}); the profile was not completely "
        "written; re-record it",
        length, found));
  }
  if (found > length) {
    return error(fmt::format(
        "{} unexpected bytes after the {}-byte payload; the file is damaged; {}", found - length,
        length, kRerecord));
  }
  const std::string_view payload = bytes.substr(kProfileHeaderBytes);
  const uint64_t actual = Fnv1a64(payload);
  if (actual != checksum) {
    return error(fmt::format(
        "checksum mismatch (header says {:016x}, payload hashes to {:016x}); the file is "
        "corrupted; {}",
        checksum, actual, kRerecord));
  }
  profile::Profile profile;
  if (payload.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !profile.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return error(fmt::format(
        "the payload does not parse as a profile although its checksum matches; the file was "
        "written by an incompatible tool; {}",
        kRerecord));
  }
  if (profile.format_version() != version) {
    return error(fmt::format(
        "the header says format version {} but the payload says {}; the file is damaged; {}",
        version, profile.format_version(), kRerecord));
  }
  if (Status status = ValidateIndices(profile); !status.ok()) {
    return error(fmt::format("inconsistent profile: {}; the file is damaged; {}",
                             status.message(), kRerecord));
  }
  return profile;
}

Result<profile::Profile> ReadProfileFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return Status::Error(fmt::format("{}: cannot open ({}); check the path and its permissions",
                                     path, std::strerror(err)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::Error(fmt::format("{}: not a regular file; pass a .cilkprof profile file", path));
  }
  std::string bytes;
  bytes.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (true) {
    if (done == bytes.size()) bytes.resize(bytes.size() + 65536);  // the file grew
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Status::Error(fmt::format("{}: read error ({})", path, std::strerror(err)));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  return DecodeProfileFile(path, bytes);
}

}  // namespace cilkprof::aggregator
