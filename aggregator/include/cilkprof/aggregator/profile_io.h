// Reading and writing profile files (format: proto/cilkprof/profile.proto, header).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "cilkprof/common/status.h"
#include "cilkprof/profile.pb.h"

namespace cilkprof::aggregator {

inline constexpr uint32_t kProfileFormatVersion = 1;

// Writes atomically: a temporary file in the same directory (created O_EXCL, mode
// 0600: a profile holds the program's arguments and paths), fsync, rename. Never
// leaves a half-written file at `path`. Replaces a regular file already at `path`
// (the caller chose that name) and nothing else: a device, FIFO, socket, directory or
// symbolic link there is left untouched (never opened) and the error says what it is
// ("...: not replaced: it is a character device, not a regular file..."). The check
// is made before writing and again just before the rename. See WriteNewProfileFile
// for the non-replacing variant. profile.format_version is written as
// kProfileFormatVersion whatever it holds.
Status WriteProfileFile(const std::string& path, const profile::Profile& profile);

// Like WriteProfileFile, but fails (leaving the existing file untouched) when `path`
// already exists, even if it appears between the caller's check and the rename. The
// message then starts with "already exists" so callers can pick another name.
Status WriteNewProfileFile(const std::string& path, const profile::Profile& profile);

// Moves a finished profile file to `to` (on the same file system) the way
// WriteProfileFile puts its temporary file in place: replacing a regular file at
// `to` and nothing else, checked just before the rename. On error `from` is left.
Status MoveProfileFile(const std::string& from, const std::string& to);

// What is at `path` when it is not a regular file, for messages: "a directory", "a
// character device", "a block device", "a FIFO (named pipe)", "a socket", "a
// symbolic link" (links are not followed). "" when nothing or a regular file is there.
std::string NonRegularFileKind(const std::string& path);

// Serializes a profile into the file format (header + payload), as written above.
std::string EncodeProfileFile(const profile::Profile& profile);

// Parses and validates an encoded file held in memory; `name` is used in messages.
Result<profile::Profile> DecodeProfileFile(const std::string& name, std::string_view bytes);

// Size of the fixed header: magic (8), version (4), payload length (8), checksum (8).
inline constexpr size_t kProfileHeaderBytes = 28;

// FNV-1a 64-bit hash, the payload checksum of the file format.
uint64_t Fnv1a64(std::string_view bytes);

// Reads and validates (magic, version, length, checksum, parse, node/location indices
// in range, parents before children). Errors name the file and say what is wrong:
// "x.cilkprof: truncated (expected 4096 payload bytes, found 1000); the profile was
// not completely written".
Result<profile::Profile> ReadProfileFile(const std::string& path);

// The same checks, but the nodes are handed to `on_node` one at a time, in order,
// each already validated, and are not kept: the profile returned has no nodes. For
// analysis of large profiles, where a protobuf object per node would cost several
// times the file (about 100 bytes a node).
using NodeCallback = std::function<void(uint32_t index, const profile::Node& node)>;
Result<profile::Profile> ReadProfileFile(const std::string& path, const NodeCallback& on_node);

}  // namespace cilkprof::aggregator
