// Runtime configuration from the environment, read once at start-up.
#ifndef CILK_SRC_CONFIG_HPP_
#define CILK_SRC_CONFIG_HPP_

#include <cstddef>
#include <cstdint>

namespace cilk::rt {

struct Config {
  uint32_t workers = 1;            // CILK_NWORKERS (default: CPUs in the affinity mask)
  std::size_t stack_size = 1 << 20;  // CILK_STACK_SIZE, usable bytes per fiber stack
  bool force_steal = false;        // CILK_FORCE_STEAL=1
};

inline constexpr uint32_t kMaxWorkers = 1024;
inline constexpr std::size_t kMinStackSize = 64 * 1024;
inline constexpr std::size_t kMaxStackSize = std::size_t{1} << 32;

// Reads CILK_NWORKERS, CILK_STACK_SIZE and CILK_FORCE_STEAL. A malformed value is
// reported on stderr (what was wrong, what to set) and replaced by the default.
Config ReadConfigFromEnvironment();

// Parses a byte count with an optional K, M or G suffix (powers of 1024).
// Returns false on anything else.
bool ParseByteSize(const char* text, std::size_t* out);

}  // namespace cilk::rt

#endif  // CILK_SRC_CONFIG_HPP_
