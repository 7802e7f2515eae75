// Test helpers: run a symbolizer fixture and read what it recorded, and find the
// "@probe:" line markers in the fixture sources.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace cilkprof::testing {

// One code address as the agent records it.
struct ProbeAddress {
  std::string module_path;
  std::string build_id;  // raw bytes
  uint64_t offset = 0;
};

// Runs `executable` and parses its "probe NAME PATH BUILD-ID OFFSET" lines. Throws
// std::runtime_error saying what went wrong (the fixture failed, bad output).
std::map<std::string, ProbeAddress> RunFixture(const std::string& executable);

// The line of the "@probe:NAME" comment in `source_file`; throws when absent or
// present twice.
uint32_t MarkerLine(const std::string& source_file, const std::string& name);

// Raw bytes of a lower-case hexadecimal string ("-" or "" for none).
std::string UnhexBytes(const std::string& hex);

}  // namespace cilkprof::testing
