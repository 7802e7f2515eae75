#include "duration.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace cilkprof::cli {
namespace {

Result<uint64_t> InRange(double ns, const std::string& what) {
  if (!(ns >= static_cast<double>(kMinPeriodNs)) || ns > static_cast<double>(kMaxPeriodNs)) {
    return Status::Error(what + " is out of range: the sampling period must be between 10us and 10s "
                                "(a frequency between 0.1 and 100000 Hz)");
  }
  return static_cast<uint64_t>(std::llround(ns));
}

}  // namespace

Result<uint64_t> ParsePeriod(const std::string& text) {
  const std::string usage = "--period '" + text + "': give a number with a unit, e.g. 1ms, 500us, 2s";
  if (text.empty()) return Status::Error(usage);
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(value)) return Status::Error(usage);
  const std::string unit(end);
  double scale = 0;
  if (unit == "ns") scale = 1;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "s") scale = 1e9;
  else return Status::Error(usage);
  return InRange(value * scale, "--period " + text);
}

Result<uint64_t> PeriodFromFrequency(double hz) {
  if (!(hz > 0) || !std::isfinite(hz)) {
    return Status::Error("--freq must be a positive number of samples per second (Hz), e.g. -F 1000");
  }
  char text[64];
  std::snprintf(text, sizeof text, "%g Hz", hz);
  return InRange(1e9 / hz, std::string("--freq ") + text);
}

Result<uint64_t> ParseDuration(const std::string& text) {
  const std::string usage = "'" + text + "': give a number with a unit, e.g. 30s, 500ms, 10m, 2h";
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || !std::isfinite(value) || value <= 0) return Status::Error(usage);
  const std::string unit(end);
  double scale = 0;
  if (unit == "ms") scale = 1e6;
  else if (unit == "s") scale = 1e9;
  else if (unit == "m" || unit == "min") scale = 60e9;
  else if (unit == "h") scale = 3600e9;
  else if (unit == "d") scale = 86400e9;
  else return Status::Error(usage);
  const double ns = value * scale;
  if (ns < 1e6 || ns > 366 * 86400e9) return Status::Error(usage + " (from 1ms to 366d)");
  return static_cast<uint64_t>(std::llround(ns));
}

}  // namespace cilkprof::cli
