// Command-line flags of cilk_service and cilk_service_load: `--name VALUE` or
// `--name=VALUE`, integers with a range, durations with a unit (perf/cilkprof style:
// 500ms, 10s, 2m). A bad flag prints what was wrong and how to get usage, exit 2.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace cilk_service {

class Flags {
 public:
  Flags(const char* program, int argc, char** argv) : program_(program), argc_(argc), argv_(argv) {}

  bool done() const { return index_ >= argc_; }
  const char* current() const { return argv_[index_]; }

  // True (and *value set, the flag consumed) if the current argument is `name`
  // with a value, as `name VALUE` or `name=VALUE`.
  bool value(const char* name, std::string* value) {
    const char* arg = argv_[index_];
    const std::size_t len = std::strlen(name);
    if (std::strncmp(arg, name, len) != 0) return false;
    if (arg[len] == '=') {
      *value = arg + len + 1;
      ++index_;
      return true;
    }
    if (arg[len] != '\0') return false;
    if (index_ + 1 >= argc_) fail(std::string(name) + " needs a value");
    *value = argv_[index_ + 1];
    index_ += 2;
    return true;
  }

  // True (and the flag consumed) if the current argument is exactly `name`.
  bool is(const char* name) {
    if (std::strcmp(argv_[index_], name) != 0) return false;
    ++index_;
    return true;
  }

  long long integer(const char* name, const std::string& text, long long min, long long max) const {
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0') fail(std::string(name) + ": '" + text + "' is not a decimal integer");
    if (errno == ERANGE || v < min || v > max) {
      fail(std::string(name) + ": " + text + " is out of range; it must be between " + std::to_string(min) +
           " and " + std::to_string(max));
    }
    return v;
  }

  // "500ms", "10s", "2m", "1h"; a bare number is seconds. Returns nanoseconds.
  long long duration_ns(const char* name, const std::string& text) const {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    const std::string unit = end != nullptr ? end : "";
    double scale = 0;
    if (unit.empty() || unit == "s") scale = 1e9;
    else if (unit == "ms") scale = 1e6;
    else if (unit == "m") scale = 60e9;
    else if (unit == "h") scale = 3600e9;
    if (end == text.c_str() || scale == 0 || errno == ERANGE || !(v > 0) || v * scale > 1e18) {
      fail(std::string(name) + ": '" + text + "' is not a positive duration such as 500ms, 10s or 2m");
    }
    return static_cast<long long>(v * scale);
  }

  [[noreturn]] void unknown() const { fail(std::string("unknown option '") + current() + "'"); }

  [[noreturn]] void fail(const std::string& what) const {
    std::fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", program_, what.c_str(), program_);
    std::exit(2);
  }

 private:
  const char* program_;
  int argc_;
  char** argv_;
  int index_ = 1;
};

}  // namespace cilk_service
