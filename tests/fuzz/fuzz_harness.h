// The fuzz targets' bodies, shared by the libFuzzer entry points (*_fuzzer.cpp, clang
// only) and by the corpus replay test (corpus_replay_test.cpp, every compiler), so that
// every seed and every crash's regression input runs in every build.
//
// Each Check* function runs one input through a reader of untrusted bytes, with
// oracles beyond "does not crash", and returns "" when all held, else what went wrong
// (the libFuzzer entry points print it and abort). docs/FUZZING.md lists the oracles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cilkprof::aggregator::fuzzing {

// The agent's frame stream as a socket delivers it: FrameDecoder + Session +
// BuildProfile. Oracles: the stream fed whole and fed in pieces decodes alike; a
// session with a Hello builds a profile the file reader accepts back unchanged, with
// no more nodes than the stream declared (plus the root).
std::string CheckWireStream(std::string_view stream);

// The same bytes as a spill file through ImportFrameStream (null symbol source).
// Oracles: it imports exactly when the stream has a Hello, merges the messages the
// in-memory decoding merges and builds the same tree, writes a profile only on
// success, and that profile reads back with both readers.
std::string CheckSpillImport(std::string_view file);

// A profile file through both readers: DecodeProfileFile (whole) and the streaming
// ReadProfileFile(path, on_node). Oracles: both accept or both reject, with the same
// message; when they accept, the same profile, which encodes and decodes unchanged.
std::string CheckProfileReader(std::string_view file);

// Rewrites each complete frame's CRC32C in a stream of format 2 (framing.h) so that
// it matches the frame's length and payload, as an agent would have written it:
// mutations then reach the decoding behind the checksum. Streams without the magic
// (format 1, or garbage) are left alone. Returns the number of frames rewritten.
size_t RepairFrameChecksums(uint8_t* data, size_t size);

// Rewrites a profile file's header (profile_io.h) so that its payload length and
// FNV-1a checksum match the bytes that follow it. Files shorter than the header or
// without the magic are left alone. Returns whether it rewrote.
bool RepairProfileHeader(uint8_t* data, size_t size);

}  // namespace cilkprof::aggregator::fuzzing
