#include "fixture_runner.h"

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace cilkprof::testing {

std::string UnhexBytes(const std::string& hex) {
  if (hex == "-") return {};
  if (hex.size() % 2 != 0) throw std::runtime_error("odd-length hex string: " + hex);
  std::string bytes;
  for (size_t i = 0; i < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  }
  return bytes;
}

std::map<std::string, ProbeAddress> RunFixture(const std::string& executable) {
  FILE* pipe = popen(("'" + executable + "'").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot start " + executable);
  std::string output;
  char buffer[4096];
  size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, got);
  const int status = pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(executable + " failed (status " + std::to_string(status) +
                             "); output:\n" + output);
  }

  std::map<std::string, ProbeAddress> probes;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string kind, name, path, build_id, offset;
    fields >> kind;
    if (kind != "probe") continue;
    if (!(fields >> name >> path >> build_id >> offset)) {
      throw std::runtime_error("malformed fixture line: " + line);
    }
    probes[name] = ProbeAddress{path, UnhexBytes(build_id), std::stoull(offset, nullptr, 16)};
  }
  return probes;
}

uint32_t MarkerLine(const std::string& source_file, const std::string& name) {
  std::ifstream in(source_file);
  if (!in) throw std::runtime_error("cannot read " + source_file);
  const std::string marker = "@probe:" + name;
  uint32_t found = 0;
  uint32_t number = 0;
  std::string line;
  while (std::getline(in, line)) {
    ++number;
    const size_t at = line.find(marker);
    if (at == std::string::npos) continue;
    const size_t after = at + marker.size();
    if (after < line.size() && line[after] != ' ') continue;  // a longer marker name
    if (found != 0) throw std::runtime_error("marker " + marker + " twice in " + source_file);
    found = number;
  }
  if (found == 0) throw std::runtime_error("no marker " + marker + " in " + source_file);
  return found;
}

}  // namespace cilkprof::testing
