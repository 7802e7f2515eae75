// Shared plumbing for the Cilk example programs: command-line parsing, timing,
// deterministic random numbers and the uniform way every example reports its
// result or a failed verification.
//
// Contract shared by every example (tests and docs/EXAMPLES.md rely on it):
//   * Arguments are optional positional integers, each with a default and a range.
//     `--help` / `-h` prints usage to stdout and exits 0.
//   * Bad arguments print what was wrong and how to get usage to stderr, exit 2.
//   * Output on stdout, one "key: value" line each:
//       <program>: <parameters>
//       mode: cilk runtime | serial elision
//       result: <what was computed>
//       verification: ok (<how it was checked>)
//       time: <seconds of the parallel computation only> s
//   * A failed verification prints "<program>: verification FAILED: <why>" to
//     stderr and exits 1. Any other error (e.g. out of memory) also exits 1.
// The timed region covers the computation only, never input generation or the
// (often serial) verification, so "time:" is comparable between the runtime and
// the serial-elision builds.
#pragma once

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <new>
#include <string>
#include <vector>

namespace cilk_examples {

// One positional argument: its name in usage text, what it means, its default and
// the inclusive range a user may ask for (chosen so that memory stays sane).
struct Arg {
  const char* name;
  const char* help;
  long long default_value;
  long long min;
  long long max;
};

struct Program {
  const char* name;
  const char* summary;  // one or two sentences: what it computes and how it is parallel
  std::vector<Arg> args;
};

inline void print_usage(const Program& program, std::FILE* out) {
  std::fprintf(out, "Usage: %s", program.name);
  for (const Arg& a : program.args) std::fprintf(out, " [%s]", a.name);
  std::fprintf(out, "\n\n%s\n\nArguments (all optional, positional integers):\n", program.summary);
  for (const Arg& a : program.args) {
    std::fprintf(out, "  %-10s %s (default %lld, range %lld..%lld)\n", a.name, a.help,
                 a.default_value, a.min, a.max);
  }
  std::fprintf(out,
               "\nEnvironment (runtime build only): CILK_NWORKERS sets the number of workers.\n"
               "Exit status: 0 verified, 1 verification failed or error, 2 bad arguments.\n");
}

[[noreturn]] inline void usage_error(const Program& program, const std::string& what) {
  std::fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", program.name, what.c_str(),
               program.name);
  std::exit(2);
}

// Parses argv against the program's argument list and returns one value per Arg
// (defaults filled in). Exits on --help or on bad input; never returns garbage.
inline std::vector<long long> parse_args(const Program& program, int argc, char** argv) {
  std::vector<long long> values;
  for (const Arg& a : program.args) values.push_back(a.default_value);
  std::size_t position = 0;
  for (int i = 1; i < argc; ++i) {
    const char* text = argv[i];
    if (std::strcmp(text, "--help") == 0 || std::strcmp(text, "-h") == 0) {
      print_usage(program, stdout);
      std::exit(0);
    }
    if (text[0] == '-' && (text[1] < '0' || text[1] > '9')) {
      usage_error(program, std::string("unknown option '") + text + "'");
    }
    if (position >= program.args.size()) {
      usage_error(program, "too many arguments: expected at most " +
                               std::to_string(program.args.size()) + ", got '" + text + "'");
    }
    const Arg& a = program.args[position];
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text, &end, 10);
    if (end == text || *end != '\0') {
      usage_error(program, std::string("argument ") + a.name + ": '" + text +
                               "' is not a decimal integer");
    }
    if (errno == ERANGE || v < a.min || v > a.max) {
      usage_error(program, std::string("argument ") + a.name + ": " + text +
                               " is out of range; it must be between " + std::to_string(a.min) +
                               " and " + std::to_string(a.max));
    }
    values[position++] = v;
  }
  return values;
}

// Which build this is: the runtime, or the serial elision (cilk::serial defines
// CILK_SERIAL_ELISION and links no runtime).
inline const char* mode_name() {
#ifdef CILK_SERIAL_ELISION
  return "serial elision";
#else
  return "cilk runtime";
#endif
}

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Times f() and returns the elapsed seconds.
template <class F>
double time_it(F&& f) {
  Stopwatch watch;
  f();
  return watch.seconds();
}

// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and good enough to make
// reproducible inputs from a seed. Also used as an order-independent fingerprint
// of a multiset (sum of mixed values).
inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() { return mix64(state_ += 0x9e3779b97f4a7c15ULL); }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, bound), bound > 0 (multiply-shift; bias negligible here).
  std::uint64_t below(std::uint64_t bound) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
  }

 private:
  std::uint64_t state_;
};

// Reporting helpers: every example prints the same keys in the same order.
inline void print_header(const Program& program, const std::string& parameters) {
  std::printf("%s: %s\nmode: %s\n", program.name, parameters.c_str(), mode_name());
}

inline void print_result(const std::string& result) { std::printf("result: %s\n", result.c_str()); }

inline void print_verified(const std::string& how) { std::printf("verification: ok (%s)\n", how.c_str()); }

inline void print_time(double seconds) {
  std::printf("time: %.6f s\n", seconds);
  std::fflush(stdout);
}

[[noreturn]] inline void verification_failed(const Program& program, const std::string& why) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: verification FAILED: %s\n", program.name, why.c_str());
  std::exit(1);
}

// Runs an example's body, turning an escaping exception (typically bad_alloc for
// a size too large for this machine) into a message and exit status 1.
template <class Body>
int guarded_main(const Program& program, Body&& body) {
  try {
    body();
    return 0;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: out of memory; choose a smaller size (see '%s --help')\n",
                 program.name, program.name);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program.name, e.what());
  }
  return 1;
}

// printf into a std::string, for building result lines.
template <class... Ts>
std::string format(const char* fmt, Ts... values) {
  const int n = std::snprintf(nullptr, 0, fmt, values...);
  std::string out(static_cast<std::size_t>(n > 0 ? n : 0), '\0');
  std::snprintf(out.data(), out.size() + 1, fmt, values...);
  return out;
}

}  // namespace cilk_examples
