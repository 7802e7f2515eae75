// The profile file format: encoding, decoding and validation (see profile_io.h and
// the header comment of proto/cilkprof/profile.proto).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

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
// The tables first, then each node against them.
Status ValidateTables(const profile::Profile& p, size_t node_count) {
  if (p.modules_size() == 0) return Status::Error("has no module table (modules[0] is required)");
  if (p.locations_size() == 0) {
    return Status::Error("has no location table (locations[0] is required)");
  }
  if (node_count == 0) return Status::Error("has no nodes (node 0, the root, is required)");
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
  for (int i = 0; i < p.locks_size(); ++i) {
    const profile::Lock& lock = p.locks(i);
    if (lock.location() == 0 || lock.location() >= static_cast<uint32_t>(p.locations_size())) {
      return Status::Error(fmt::format("lock {} refers to location {}, but there are only {}", i,
                                       lock.location(), p.locations_size()));
    }
    if (!wire::LockKind_IsValid(lock.kind())) {
      return Status::Error(fmt::format("lock {} has an unknown lock kind", i));
    }
  }
  // Per-thread values (issue 16): threads, metrics and nodes in range.
  for (int i = 0; i < p.thread_values_size(); ++i) {
    const profile::ThreadValues& entry = p.thread_values(i);
    for (uint32_t t : entry.threads()) {
      if (t >= static_cast<uint32_t>(p.threads_size())) {
        return Status::Error(fmt::format("thread_values {} refers to thread {}, but there are only {}", i, t,
                                         p.threads_size()));
      }
    }
    for (const profile::ThreadMetricColumn& column : entry.columns()) {
      if (column.metric() >= static_cast<uint32_t>(p.metrics_size()) ||
          column.node_delta_size() != column.value_size()) {
        return Status::Error(fmt::format("thread_values {} has a column of an unknown metric or with {} nodes "
                                         "for {} values",
                                         i, column.node_delta_size(), column.value_size()));
      }
      uint64_t node = 0;
      for (uint32_t delta : column.node_delta()) {
        node += delta;
        if (node >= node_count) {
          return Status::Error(fmt::format("thread_values {} refers to node {}, but there are only {}", i, node,
                                           node_count));
        }
      }
    }
  }
  return Status::Ok();
}

// `lock_nodes[j]`: node j (j < i) is a FRAME_LOCK node; the entry for node i is set here.
Status ValidateNode(const profile::Profile& p, int i, const profile::Node& node,
                    std::vector<bool>* lock_nodes) {
  const uint32_t metrics = static_cast<uint32_t>(p.metrics_size());
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
  // A lock object (issue 14) is a leaf with the lock's location.
  if (i > 0 && node.kind() == wire::FRAME_LOCK && node.location() == 0) {
    return Status::Error(fmt::format("lock node {} has no location", i));
  }
  if (i > 0 && (*lock_nodes)[node.parent()]) {
    return Status::Error(fmt::format("node {} has lock node {} as its parent (lock nodes are leaves)",
                                     i, node.parent()));
  }
  (*lock_nodes)[static_cast<size_t>(i)] = i > 0 && node.kind() == wire::FRAME_LOCK;
  if (static_cast<uint32_t>(node.exclusive_size()) > metrics) {
    return Status::Error(fmt::format("node {} has {} metric values, but the profile defines {}",
                                     i, node.exclusive_size(), metrics));
  }
  for (double v : node.exclusive()) {
    if (!std::isfinite(v)) {
      return Status::Error(fmt::format("node {} has a metric value that is not a number", i));
    }
  }
  return Status::Ok();
}

Status ValidateIndices(const profile::Profile& p) {
  if (Status tables = ValidateTables(p, static_cast<size_t>(p.nodes_size())); !tables.ok()) return tables;
  std::vector<bool> lock_nodes(static_cast<size_t>(p.nodes_size()), false);
  for (int i = 0; i < p.nodes_size(); ++i) {
    if (Status node = ValidateNode(p, i, p.nodes(i), &lock_nodes); !node.ok()) return node;
  }
  return Status::Ok();
}

constexpr uint32_t kNodesField = 6;  // Profile.nodes

// The top-level fields of a serialized message, without parsing them: each one's
// number and its bytes (tag included). False on malformed wire data, and on any
// encoding protobuf's parser might split otherwise: groups, wire types 3, 4, 6 and 7,
// tags and lengths not in their shortest form or beyond 32 bits. Cilkprof never
// writes those; the streaming reader leaves such a file to the whole-file decoder.
class FieldScanner {
 public:
  explicit FieldScanner(std::string_view bytes) : bytes_(bytes) {}
  // The next field; `body` is the payload of a length-delimited field.
  bool Next(uint32_t* number, std::string_view* field, std::string_view* body) {
    const size_t start = at_;
    uint64_t tag = 0;
    if (!ShortVarint(&tag, std::numeric_limits<uint32_t>::max())) return false;
    *number = static_cast<uint32_t>(tag >> 3);
    wire_type_ = static_cast<uint32_t>(tag & 7);
    uint64_t skip = 0;
    switch (tag & 7) {
      case 0: {
        uint64_t ignored;
        if (!Varint(&ignored)) return false;
        break;
      }
      case 1: skip = 8; break;
      case 5: skip = 4; break;
      case 2:
        if (!ShortVarint(&skip, std::numeric_limits<int32_t>::max())) return false;
        break;
      default:
        return false;  // groups and unknown wire types: not in this format
    }
    if (skip > bytes_.size() - at_) return false;
    *body = bytes_.substr(at_, skip);
    at_ += skip;
    *field = bytes_.substr(start, at_ - start);
    return *number != 0;
  }
  bool done() const { return at_ == bytes_.size(); }
  // A node is field 6 with the wire type of a message: protobuf keeps field 6 of any
  // other wire type as an unknown field of the profile, and so must this reader.
  bool AtNode(uint32_t number) const { return number == kNodesField && wire_type_ == 2; }

 private:
  bool Varint(uint64_t* value) {
    *value = 0;
    for (int shift = 0; shift < 64 && at_ < bytes_.size(); shift += 7) {
      const auto byte = static_cast<unsigned char>(bytes_[at_++]);
      *value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }
  // A tag or a length: at most `max`, in its shortest form (a last byte of 0 is a
  // longer form, except for the value 0 itself).
  bool ShortVarint(uint64_t* value, uint64_t max) {
    const size_t start = at_;
    if (!Varint(value) || *value > max) return false;
    return at_ - start == 1 || bytes_[at_ - 1] != 0;
  }
  std::string_view bytes_;
  size_t at_ = 0;
  uint32_t wire_type_ = 0;
};

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

namespace {

// The checks of the fixed header and the checksum; the payload on success.
Result<std::string_view> CheckedPayload(const std::string& name, std::string_view bytes, uint32_t* version_out) {
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
  *version_out = version;
  const uint64_t actual = Fnv1a64(payload);
  if (actual != checksum) {
    return error(fmt::format(
        "checksum mismatch (header says {:016x}, payload hashes to {:016x}); the file is "
        "corrupted; {}",
        checksum, actual, kRerecord));
  }
  return payload;
}

std::string UnparsableMessage(const std::string& name) {
  return name + ": " + fmt::format(
      "the payload does not parse as a profile although its checksum matches; the file was "
      "written by an incompatible tool; {}",
      kRerecord);
}

}  // namespace

Result<profile::Profile> DecodeProfileFile(const std::string& name, std::string_view bytes) {
  auto error = [&](const std::string& what) { return Status::Error(name + ": " + what); };
  uint32_t version = 0;
  auto checked = CheckedPayload(name, bytes, &version);
  if (!checked.ok()) return checked.status();
  const std::string_view payload = *checked;
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

namespace {

// A profile file mapped read-only (no copy on the heap), or an error naming the path.
class MappedFile {
 public:
  static Result<MappedFile> Open(const std::string& path) {
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
    MappedFile file;
    if (st.st_size > 0) {
      void* at = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (at == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        return Status::Error(fmt::format("{}: read error ({})", path, std::strerror(err)));
      }
      ::madvise(at, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
      file.data_ = static_cast<const char*>(at);
      file.size_ = static_cast<size_t>(st.st_size);
    }
    ::close(fd);
    return file;
  }
  MappedFile(MappedFile&& other) noexcept : data_(other.data_), size_(other.size_) { other.data_ = nullptr; }
  MappedFile(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  }
  std::string_view bytes() const { return {data_, size_}; }

 private:
  MappedFile() = default;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

Result<profile::Profile> ReadProfileFile(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  return DecodeProfileFile(path, file->bytes());
}

Result<profile::Profile> ReadProfileFile(const std::string& path, const NodeCallback& on_node) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  auto error = [&](const std::string& what) { return Status::Error(path + ": " + what); };
  uint32_t version = 0;
  auto checked = CheckedPayload(path, file->bytes(), &version);
  if (!checked.ok()) return checked.status();
  const std::string_view payload = *checked;

  // A payload the scanner cannot split as protobuf would (FieldScanner) is decoded
  // whole, with DecodeProfileFile's verdict; Cilkprof never writes one.
  auto decode_whole = [&]() -> Result<profile::Profile> {
    auto whole = DecodeProfileFile(path, file->bytes());
    if (!whole.ok()) return whole.status();
    for (int i = 0; i < whole->nodes_size(); ++i) on_node(static_cast<uint32_t>(i), whole->nodes(i));
    whole->clear_nodes();
    return whole;
  };

  // Pass 1: every field but the nodes makes up the profile (tables come in any order).
  std::string tables;
  size_t node_count = 0;
  {
    FieldScanner scan(payload);
    uint32_t number = 0;
    std::string_view field, body;
    while (!scan.done()) {
      if (!scan.Next(&number, &field, &body)) return decode_whole();
      if (scan.AtNode(number)) {
        ++node_count;
      } else {
        tables.append(field);
      }
    }
  }
  profile::Profile profile;
  if (tables.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      node_count > std::numeric_limits<uint32_t>::max() ||
      !profile.ParseFromArray(tables.data(), static_cast<int>(tables.size()))) {
    return Status::Error(UnparsableMessage(path));
  }
  tables = {};
  // Parsed alone, a node is one level less deep than inside the profile. Protobuf's
  // recursion limit can tell the difference only through groups, which land in a
  // node's unknown fields (Cilkprof writes none): when a node has any, the whole-file
  // decoder's verdict counts (asked once).
  std::optional<Status> whole_verdict;
  auto refused_whole = [&](const profile::Node& node) {
    if (node.GetReflection()->GetUnknownFields(node).empty()) return false;
    if (!whole_verdict) whole_verdict = DecodeProfileFile(path, file->bytes()).status();
    return !whole_verdict->ok();
  };
  // DecodeProfileFile parses every node before it checks anything, so an unparsable
  // node outranks every other error. This reader meets the other errors before it has
  // parsed the nodes after them: before reporting one, it parses those nodes (on this
  // error path only: a good file's nodes are parsed once).
  // Parses the nodes one reused message at a time, in file order, and hands each to
  // `visit` (which returns a failed status to stop); an unparsable node, or one the
  // whole-file decoder refuses, stops the walk with that verdict.
  auto for_each_node = [&](const auto& visit) -> Status {
    FieldScanner scan(payload);
    uint32_t number = 0;
    std::string_view field, body;
    profile::Node node;
    int index = 0;
    while (!scan.done()) {
      scan.Next(&number, &field, &body);  // pass 1 read the same bytes
      if (!scan.AtNode(number)) continue;
      if (!node.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
        return Status::Error(UnparsableMessage(path));
      }
      if (refused_whole(node)) return *whole_verdict;
      if (Status status = visit(index++, node); !status.ok()) return status;
    }
    return Status::Ok();
  };
  auto unless_a_node_is_unparsable = [&](Status status) {
    const Status nodes = for_each_node([](int, const profile::Node&) { return Status::Ok(); });
    return nodes.ok() ? status : nodes;
  };
  if (profile.format_version() != version) {
    return unless_a_node_is_unparsable(error(fmt::format(
        "the header says format version {} but the payload says {}; the file is damaged; {}",
        version, profile.format_version(), kRerecord)));
  }
  auto damaged = [&](const Status& status) {
    return unless_a_node_is_unparsable(error(fmt::format(
        "inconsistent profile: {}; the file is damaged; {}", status.message(), kRerecord)));
  };
  if (Status status = ValidateTables(profile, node_count); !status.ok()) return damaged(status);

  // Pass 2: the nodes, one reused message at a time, checked against the tables.
  std::vector<bool> lock_nodes(node_count, false);
  const Status nodes = for_each_node([&](int index, const profile::Node& node) {
    if (Status status = ValidateNode(profile, index, node, &lock_nodes); !status.ok()) return damaged(status);
    on_node(static_cast<uint32_t>(index), node);
    return Status::Ok();
  });
  if (!nodes.ok()) return nodes;
  return profile;
}

}  // namespace cilkprof::aggregator
