// CRC32C (Castagnoli, the iSCSI / ext4 / SSE4.2 polynomial 0x82F63B78, reflected),
// the checksum of the agent's frame stream (docs/PROFILE_FORMAT.md, "Frame stream").
//
// Header-only and dependency-free because both sides use it: the aggregator, and the
// preloaded agent, which links nothing but libc and computes checksums in its crash
// path, inside a signal handler. Async-signal-safe: pure computation, no allocation,
// no lock; the table is a compile-time constant. On x86-64 with SSE4.2 it uses the
// crc32 instruction (about 10 bytes per cycle), elsewhere a table (about 1 byte/cycle).
//
// Check value: Crc32c("123456789") == 0xE3069283.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cilkprof::crc32c {

namespace detail {

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}

inline constexpr std::array<uint32_t, 256> kTable = MakeTable();

// `state` is the running register (already inverted); returns the new register.
inline uint32_t ExtendPortable(uint32_t state, const unsigned char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) state = kTable[(state ^ p[i]) & 0xff] ^ (state >> 8);
  return state;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) inline uint32_t ExtendSse42(uint32_t state, const unsigned char* p,
                                                               size_t n) {
  uint64_t wide = state;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof word);
    wide = __builtin_ia32_crc32di(wide, word);
    p += 8;
    n -= 8;
  }
  uint32_t narrow = static_cast<uint32_t>(wide);
  while (n > 0) {
    narrow = __builtin_ia32_crc32qi(narrow, *p);
    ++p;
    --n;
  }
  return narrow;
}

inline bool HaveSse42() {
  // Reads what libgcc's constructor found; __builtin_cpu_init is idempotent and makes
  // this safe even from another library's constructor.
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}
#endif

}  // namespace detail

// Continues a CRC: Extend(Extend(0, a), b) == Crc32c(a + b).
inline uint32_t Extend(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t state = ~crc;
#if defined(__x86_64__)
  if (detail::HaveSse42()) return ~detail::ExtendSse42(state, p, size);
#endif
  return ~detail::ExtendPortable(state, p, size);
}

inline uint32_t Compute(const void* data, size_t size) { return Extend(0, data, size); }

}  // namespace cilkprof::crc32c
