// The example service's protocol, shared by cilk_service and cilk_service_load:
// one request per line, one reply line per request, in order, over a Unix stream
// socket. Plain text so that a user can type it (`socat - UNIX-CONNECT:PATH`).
//
//   fib N            -> ok <fib(N)>                       N in 0..kMaxFib
//   sort N [SEED]    -> ok <min> <median> <max>           N in 1..kMaxSort keys made from
//                                                         SEED (default 1), sorted; the
//                                                         median is key N/2 of the result
//   nqueens N        -> ok <solutions>                    N in 1..kMaxQueens
//   ping             -> ok pong
//   quit             -> ok bye, then the service stops (exit status 0)
//   anything else    -> error <what was wrong>            (the connection stays usable)
//
// Results are deterministic, so the load generator checks every reply against the
// serial answers below (computed once per request kind, before the load starts).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/example_support.hpp"

namespace cilk_service {

// Limits: a single request stays well under a few seconds on two cores.
constexpr long long kMaxFib = 40;
constexpr long long kMaxSort = 10'000'000;
constexpr long long kMaxQueens = 15;
// A longer line is a protocol error; the service closes that connection.
constexpr std::size_t kMaxLineBytes = 256;

enum class Kind { kFib, kSort, kNqueens, kPing, kQuit };

struct Request {
  Kind kind = Kind::kPing;
  long long n = 0;
  long long seed = 1;  // sort only
};

inline const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kFib: return "fib";
    case Kind::kSort: return "sort";
    case Kind::kNqueens: return "nqueens";
    case Kind::kPing: return "ping";
    case Kind::kQuit: return "quit";
  }
  return "?";
}

// The request line for a compute request (no trailing newline).
inline std::string format_request(const Request& r) {
  if (r.kind == Kind::kSort) return cilk_examples::format("sort %lld %lld", r.n, r.seed);
  if (r.kind == Kind::kFib || r.kind == Kind::kNqueens) {
    return cilk_examples::format("%s %lld", kind_name(r.kind), r.n);
  }
  return kind_name(r.kind);
}

namespace detail {

inline std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

// Parses a decimal integer in [min, max]; on failure sets *error and returns false.
inline bool parse_integer(std::string_view word, const char* what, long long min, long long max,
                          long long* value, std::string* error) {
  long long v = 0;
  bool ok = !word.empty() && word.size() <= 18;
  for (char c : word) {
    if (c < '0' || c > '9') ok = false;
    else v = v * 10 + (c - '0');
  }
  if (!ok) {
    *error = cilk_examples::format("%s '%.*s' is not a decimal integer", what,
                                   static_cast<int>(word.size()), word.data());
    return false;
  }
  if (v < min || v > max) {
    *error = cilk_examples::format("%s %lld is out of range %lld..%lld", what, v, min, max);
    return false;
  }
  *value = v;
  return true;
}

inline bool fail(std::string* error, const char* why) {
  *error = why;
  return false;
}

}  // namespace detail

// Parses one request line (without its newline). On failure returns false and says
// why in *error, in words fit for the `error` reply.
inline bool parse_request(std::string_view line, Request* request, std::string* error) {
  const auto words = detail::split_words(line);
  if (words.empty()) {
    *error = "empty request; expected fib N, sort N [SEED], nqueens N, ping or quit";
    return false;
  }
  const std::string_view verb = words[0];
  Request r;
  std::size_t max_words = 2;
  if (verb == "ping" || verb == "quit") {
    r.kind = verb == "ping" ? Kind::kPing : Kind::kQuit;
    max_words = 1;
  } else if (verb == "fib") {
    r.kind = Kind::kFib;
    if (words.size() < 2) return detail::fail(error, "fib needs N (fib N)");
    if (!detail::parse_integer(words[1], "N", 0, kMaxFib, &r.n, error)) return false;
  } else if (verb == "nqueens") {
    r.kind = Kind::kNqueens;
    if (words.size() < 2) return detail::fail(error, "nqueens needs N (nqueens N)");
    if (!detail::parse_integer(words[1], "N", 1, kMaxQueens, &r.n, error)) return false;
  } else if (verb == "sort") {
    r.kind = Kind::kSort;
    max_words = 3;
    if (words.size() < 2) return detail::fail(error, "sort needs N (sort N [SEED])");
    if (!detail::parse_integer(words[1], "N", 1, kMaxSort, &r.n, error)) return false;
    if (words.size() >= 3 &&
        !detail::parse_integer(words[2], "SEED", 0, 1'000'000'000, &r.seed, error)) {
      return false;
    }
  } else {
    *error = cilk_examples::format("unknown request '%.*s'; expected fib N, sort N [SEED], nqueens N, ping or quit",
                                   static_cast<int>(verb.size()), verb.data());
    return false;
  }
  if (words.size() > max_words) {
    *error = cilk_examples::format("too many words for %s", kind_name(r.kind));
    return false;
  }
  *request = r;
  return true;
}

// ---- Serial answers (the load generator's checks; the service computes in parallel).

// The keys a `sort N SEED` request sorts.
inline std::vector<std::int64_t> sort_input(long long n, long long seed) {
  std::vector<std::int64_t> keys(static_cast<std::size_t>(n));
  cilk_examples::Random rng(static_cast<std::uint64_t>(seed));
  for (auto& k : keys) k = static_cast<std::int64_t>(rng.next());
  return keys;
}

// The reply a correct service gives to `r` (without "\n").
inline std::string expected_reply(const Request& r) {
  switch (r.kind) {
    case Kind::kFib: {
      std::int64_t a = 0, b = 1;
      for (long long i = 0; i < r.n; ++i) {
        const std::int64_t next = a + b;
        a = b;
        b = next;
      }
      return cilk_examples::format("ok %lld", static_cast<long long>(a));
    }
    case Kind::kSort: {
      auto keys = sort_input(r.n, r.seed);
      const auto [lo, hi] = std::minmax_element(keys.begin(), keys.end());
      const long long min = *lo, max = *hi;
      std::nth_element(keys.begin(), keys.begin() + r.n / 2, keys.end());
      return cilk_examples::format("ok %lld %lld %lld", min, static_cast<long long>(keys[r.n / 2]), max);
    }
    case Kind::kNqueens: {
      // OEIS A000170, n = 0..15.
      static constexpr long long kCounts[] = {1,   1,   0,    0,    2,     10,    4,      40,
                                              92,  352, 724,  2680, 14200, 73712, 365596, 2279184};
      return cilk_examples::format("ok %lld", kCounts[r.n]);
    }
    case Kind::kPing: return "ok pong";
    case Kind::kQuit: return "ok bye";
  }
  return "";
}

}  // namespace cilk_service
