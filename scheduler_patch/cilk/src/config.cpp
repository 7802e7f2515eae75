#include "config.hpp"

#include <sched.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cilk::rt {
namespace {

uint32_t AvailableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return static_cast<uint32_t>(count);
  }
  return 1;
}

}  // namespace

bool ParseByteSize(const char* text, std::size_t* out) {
  if (text == nullptr || *text < '0' || *text > '9') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0) return false;
  unsigned long long scale = 1;
  switch (*end) {
    case '\0': break;
    case 'k': case 'K': scale = 1ull << 10; ++end; break;
    case 'm': case 'M': scale = 1ull << 20; ++end; break;
    case 'g': case 'G': scale = 1ull << 30; ++end; break;
    default: return false;
  }
  if (*end == 'i' || *end == 'I') ++end;  // "Mi" as well as "M"
  if (*end == 'b' || *end == 'B') ++end;  // "MB"
  if (*end != '\0') return false;
  if (value > (~0ull) / scale) return false;
  *out = static_cast<std::size_t>(value * scale);
  return true;
}

Config ReadConfigFromEnvironment() {
  Config config;
  config.workers = AvailableCpus();
  if (config.workers > kMaxWorkers) config.workers = kMaxWorkers;

  if (const char* text = std::getenv("CILK_NWORKERS"); text != nullptr && *text != '\0') {
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || value < 1 || value > static_cast<long>(kMaxWorkers)) {
      std::fprintf(stderr,
                   "cilk: CILK_NWORKERS='%s' is not a number of workers from 1 to %u; using %u (the CPUs "
                   "available). Set it to a whole number, e.g. CILK_NWORKERS=4.\n",
                   text, kMaxWorkers, config.workers);
    } else {
      config.workers = static_cast<uint32_t>(value);
    }
  }

  if (const char* text = std::getenv("CILK_STACK_SIZE"); text != nullptr && *text != '\0') {
    std::size_t size = 0;
    if (!ParseByteSize(text, &size) || size < kMinStackSize || size > kMaxStackSize) {
      std::fprintf(stderr,
                   "cilk: CILK_STACK_SIZE='%s' is not a stack size from 64K to 4G; using %zuK. Give bytes "
                   "with an optional K, M or G suffix, e.g. CILK_STACK_SIZE=8M.\n",
                   text, config.stack_size >> 10);
    } else {
      config.stack_size = size;
    }
  }

  if (const char* text = std::getenv("CILK_FORCE_STEAL"); text != nullptr && *text != '\0') {
    if (std::strcmp(text, "1") == 0 || std::strcmp(text, "true") == 0 || std::strcmp(text, "yes") == 0) {
      config.force_steal = true;
    } else if (std::strcmp(text, "0") != 0 && std::strcmp(text, "false") != 0 && std::strcmp(text, "no") != 0) {
      std::fprintf(stderr, "cilk: CILK_FORCE_STEAL='%s' is neither 1 nor 0; forced steals stay off. Set "
                           "CILK_FORCE_STEAL=1 to turn them on.\n", text);
    }
  }
  return config;
}

}  // namespace cilk::rt
