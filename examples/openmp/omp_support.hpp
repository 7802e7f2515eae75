// Plumbing for the OpenMP example programs: the argument parsing, reporting and
// verification contract of the Cilk examples (common/example_support.hpp), with a
// usage text and a "mode:" line that speak of OpenMP threads instead of Cilk workers.
#pragma once

#include <omp.h>

#include <cstdio>
#include <cstring>

#include "common/example_support.hpp"

namespace omp_examples {

namespace ex = cilk_examples;

// --help / -h: the OpenMP usage text (example_support's names CILK_NWORKERS);
// anything else is parsed by ex::parse_args.
inline std::vector<long long> parse_args(const ex::Program& program, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf("Usage: %s", program.name);
      for (const ex::Arg& a : program.args) std::printf(" [%s]", a.name);
      std::printf("\n\n%s\n\nArguments (all optional, positional integers):\n", program.summary);
      for (const ex::Arg& a : program.args) {
        std::printf("  %-10s %s (default %lld, range %lld..%lld)\n", a.name, a.help, a.default_value, a.min,
                    a.max);
      }
      std::printf(
          "\nEnvironment: OMP_NUM_THREADS sets the number of OpenMP threads.\n"
          "Exit status: 0 verified, 1 verification failed or error, 2 bad arguments.\n");
      std::exit(0);
    }
  }
  return ex::parse_args(program, argc, argv);
}

inline void print_header(const ex::Program& program, const std::string& parameters) {
  std::printf("%s: %s\nmode: openmp, %d threads\n", program.name, parameters.c_str(), omp_get_max_threads());
}

}  // namespace omp_examples
