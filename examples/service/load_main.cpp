// cilk_service_load: the load generator of the example service (docs/EXAMPLES.md,
// "The example service"). Opens --connections connections to cilk_service, sends a
// mix of requests (--mix fib:3,sort:1) as fast as the service answers or at a fixed
// --rate, for a --count of requests or a --duration, checks every reply against the
// serial answer, and prints throughput and latency percentiles.
//
// Each connection is closed-loop: one request in flight, the next sent when the
// reply is in. With --rate, request i is due at start + i / rate and its latency is
// measured from that due time, not from when it was actually sent, so a service that
// falls behind shows its queueing delay (the "coordinated omission" correction of
// wrk2). Which kind request i is depends on i and --seed only, so a --count run sends
// the same requests whatever the number of connections.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "service/flags.hpp"
#include "service/requests.hpp"
#include "service/unix_socket.hpp"

namespace svc = cilk_service;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kName = "cilk_service_load";

struct MixEntry {
  svc::Request request;  // the request line this kind sends
  long long weight;
  std::string expected;  // its correct reply
};

struct Options {
  std::string socket_path;
  std::string mix_text = "fib:1,sort:1,nqueens:1";
  long long fib_n = 25, sort_n = 100'000, nqueens_n = 9;
  long long count = 0;          // 0: use the duration
  long long duration_ns = 0;    // 0: use the count
  double rate = 0;              // requests per second over all connections; 0: flat out
  long long connections = 1;
  long long seed = 1;
  bool quit = false;
};

void print_usage() {
  std::printf(
      "Usage: %s [--socket PATH] [--mix KIND:WEIGHT,...] [--count N | --duration D]\n"
      "       [--rate R] [--connections C] [--fib N] [--sort N] [--nqueens N] [--seed S] [--quit]\n\n"
      "Sends requests to cilk_service and prints throughput and latency percentiles.\n"
      "Every reply is checked against the serial answer; exit status 1 if any is wrong.\n\n"
      "Options:\n"
      "  --socket PATH     the service's socket (default %s)\n"
      "  --mix M           request kinds and their weights (default fib:1,sort:1,nqueens:1);\n"
      "                    kinds: fib, sort, nqueens\n"
      "  --count N         send N requests in all\n"
      "  --duration D      send requests for D (500ms, 10s, 2m; default 10s without --count)\n"
      "  --rate R          R requests per second over all connections, latency measured\n"
      "                    from each request's due time (default: as fast as replies come)\n"
      "  --connections C   concurrent connections, one request in flight each (default 1)\n"
      "  --fib N           argument of the fib requests (default 25)\n"
      "  --sort N          keys per sort request (default 100000)\n"
      "  --nqueens N       board size of the nqueens requests (default 9)\n"
      "  --seed S          seed of the request sequence (default 1)\n"
      "  --quit            afterwards, send 'quit': the service stops\n"
      "Exit status: 0 all replies correct, 1 a wrong reply or a lost connection, 2 bad option.\n",
      kName, svc::default_socket_path().c_str());
}

std::vector<MixEntry> parse_mix(const svc::Flags& flags, const Options& o) {
  std::vector<MixEntry> mix;
  std::size_t start = 0;
  while (start <= o.mix_text.size()) {
    std::size_t end = o.mix_text.find(',', start);
    if (end == std::string::npos) end = o.mix_text.size();
    const std::string item = o.mix_text.substr(start, end - start);
    const std::size_t colon = item.find(':');
    const std::string kind = item.substr(0, colon);
    MixEntry entry;
    entry.weight = colon == std::string::npos ? 1 : flags.integer("--mix weight", item.substr(colon + 1), 0, 1'000'000);
    if (kind == "fib") entry.request = {svc::Kind::kFib, o.fib_n, 1};
    else if (kind == "sort") entry.request = {svc::Kind::kSort, o.sort_n, 1};
    else if (kind == "nqueens") entry.request = {svc::Kind::kNqueens, o.nqueens_n, 1};
    else flags.fail("--mix: unknown request kind '" + kind + "'; use fib, sort or nqueens, e.g. --mix fib:3,sort:1");
    for (const MixEntry& other : mix) {
      if (other.request.kind == entry.request.kind) flags.fail("--mix: " + kind + " appears twice");
    }
    if (entry.weight > 0) mix.push_back(entry);
    start = end + 1;
  }
  if (mix.empty()) flags.fail("--mix: every weight is 0; give at least one kind a positive weight");
  return mix;
}

Options parse_options(int argc, char** argv, std::vector<MixEntry>* mix) {
  Options o;
  o.socket_path = svc::default_socket_path();
  svc::Flags flags(kName, argc, argv);
  std::string v;
  while (!flags.done()) {
    if (flags.is("--help") || flags.is("-h")) {
      print_usage();
      std::exit(0);
    } else if (flags.value("--socket", &v)) o.socket_path = v;
    else if (flags.value("--mix", &v)) o.mix_text = v;
    else if (flags.value("--count", &v)) o.count = flags.integer("--count", v, 1, 1'000'000'000'000);
    else if (flags.value("--duration", &v)) o.duration_ns = flags.duration_ns("--duration", v);
    else if (flags.value("--rate", &v)) o.rate = static_cast<double>(flags.integer("--rate", v, 1, 10'000'000));
    else if (flags.value("--connections", &v)) o.connections = flags.integer("--connections", v, 1, 200);
    else if (flags.value("--fib", &v)) o.fib_n = flags.integer("--fib", v, 0, svc::kMaxFib);
    else if (flags.value("--sort", &v)) o.sort_n = flags.integer("--sort", v, 1, svc::kMaxSort);
    else if (flags.value("--nqueens", &v)) o.nqueens_n = flags.integer("--nqueens", v, 1, svc::kMaxQueens);
    else if (flags.value("--seed", &v)) o.seed = flags.integer("--seed", v, 0, 1'000'000'000);
    else if (flags.is("--quit")) o.quit = true;
    else flags.unknown();
  }
  if (o.count > 0 && o.duration_ns > 0) flags.fail("give --count or --duration, not both");
  if (o.count == 0 && o.duration_ns == 0) o.duration_ns = 10'000'000'000LL;
  *mix = parse_mix(flags, o);
  return o;
}

// What one connection measured.
struct Tally {
  std::vector<std::vector<double>> latency_ms;  // per mix entry
  long long wrong = 0;
  std::string first_wrong;
  std::string failure;  // a lost connection
};

struct Shared {
  const Options* options;
  const std::vector<MixEntry>* mix;
  long long total_weight = 0;
  Clock::time_point start;
  std::atomic<long long> next_index{0};
  std::atomic<bool> stop{false};
};

std::size_t pick(const Shared& shared, long long index) {
  const std::uint64_t draw =
      cilk_examples::mix64(static_cast<std::uint64_t>(shared.options->seed) * 0x9e3779b97f4a7c15ULL +
                           static_cast<std::uint64_t>(index)) %
      static_cast<std::uint64_t>(shared.total_weight);
  long long acc = 0;
  for (std::size_t k = 0; k < shared.mix->size(); ++k) {
    acc += (*shared.mix)[k].weight;
    if (static_cast<long long>(draw) < acc) return k;
  }
  return shared.mix->size() - 1;
}

void run_connection(Shared& shared, Tally& tally) {
  const Options& o = *shared.options;
  tally.latency_ms.resize(shared.mix->size());
  std::string error;
  const int fd = svc::connect_unix(o.socket_path, &error);
  if (fd < 0) {
    tally.failure = error + "; is cilk_service running? (start it with: cilk_service --socket " + o.socket_path + ")";
    shared.stop = true;
    return;
  }
  svc::LineReader reader(fd);
  const auto deadline = shared.start + std::chrono::nanoseconds(o.duration_ns);
  long long replies = 0;
  std::string reply;
  while (!shared.stop) {
    const long long i = shared.next_index.fetch_add(1);
    if (o.count > 0 && i >= o.count) break;
    Clock::time_point due = Clock::now();
    if (o.rate > 0) due = shared.start + std::chrono::nanoseconds(static_cast<long long>(1e9 * i / o.rate));
    if (o.duration_ns > 0 && std::max(due, Clock::now()) >= deadline) break;
    if (o.rate > 0) std::this_thread::sleep_until(due);
    const std::size_t k = pick(shared, i);
    const MixEntry& entry = (*shared.mix)[k];
    if (!svc::send_all(fd, svc::format_request(entry.request) + "\n") ||
        !reader.read_line(&reply, 1 << 16)) {
      tally.failure = cilk_examples::format("the service closed the connection after %lld replies", replies);
      shared.stop = true;
      break;
    }
    ++replies;
    tally.latency_ms[k].push_back(std::chrono::duration<double, std::milli>(Clock::now() - due).count());
    if (reply != entry.expected) {
      if (tally.wrong++ == 0) {
        tally.first_wrong = "'" + svc::format_request(entry.request) + "' got '" + reply + "', expected '" + entry.expected + "'";
      }
    }
  }
  close(fd);
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const std::size_t rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<std::size_t>(rank, 1)) - 1];
}

void print_row(const std::string& label, std::vector<double> latencies) {
  std::sort(latencies.begin(), latencies.end());
  std::printf("  %-16s %10zu %10.3f %10.3f %10.3f %10.3f\n", label.c_str(), latencies.size(),
              percentile(latencies, 0.50), percentile(latencies, 0.90), percentile(latencies, 0.99),
              latencies.empty() ? 0.0 : latencies.back());
}

bool send_quit(const std::string& path) {
  std::string error;
  const int fd = svc::connect_unix(path, &error);
  std::string reply;
  svc::LineReader reader(fd);
  const bool ok = fd >= 0 && svc::send_all(fd, "quit\n") && reader.read_line(&reply, 1 << 16) && reply == "ok bye";
  if (fd >= 0) close(fd);
  if (!ok) std::fprintf(stderr, "%s: --quit: the service did not acknowledge 'quit'%s%s\n", kName, fd < 0 ? ": " : "", error.c_str());
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<MixEntry> mix;
  const Options o = parse_options(argc, argv, &mix);
  Shared shared;
  shared.options = &o;
  shared.mix = &mix;
  for (MixEntry& entry : mix) {
    entry.expected = svc::expected_reply(entry.request);
    shared.total_weight += entry.weight;
  }

  std::vector<Tally> tallies(static_cast<std::size_t>(o.connections));
  std::vector<std::thread> threads;
  shared.start = Clock::now();
  for (Tally& tally : tallies) threads.emplace_back([&shared, &tally] { run_connection(shared, tally); });
  for (std::thread& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - shared.start).count();

  long long requests = 0, wrong = 0;
  std::string first_wrong, failure;
  std::vector<double> all;
  std::vector<std::vector<double>> per_kind(mix.size());
  for (const Tally& tally : tallies) {
    for (std::size_t k = 0; k < tally.latency_ms.size(); ++k) {
      per_kind[k].insert(per_kind[k].end(), tally.latency_ms[k].begin(), tally.latency_ms[k].end());
      all.insert(all.end(), tally.latency_ms[k].begin(), tally.latency_ms[k].end());
    }
    wrong += tally.wrong;
    if (first_wrong.empty()) first_wrong = tally.first_wrong;
    if (failure.empty()) failure = tally.failure;
  }
  requests = static_cast<long long>(all.size());

  std::printf("%s: %lld requests in %.3f s on %lld connection%s: %.1f requests/s (mix %s)\n", kName, requests,
              seconds, o.connections, o.connections == 1 ? "" : "s", seconds > 0 ? requests / seconds : 0.0,
              o.mix_text.c_str());
  std::printf("  %-16s %10s %10s %10s %10s %10s\n", "request", "count", "p50 ms", "p90 ms", "p99 ms", "max ms");
  for (std::size_t k = 0; k < mix.size(); ++k) print_row(svc::format_request(mix[k].request), per_kind[k]);
  print_row("all", all);
  if (o.rate > 0) std::printf("  (latency from each request's due time at --rate %.0f/s)\n", o.rate);
  std::printf("replies: %lld correct, %lld wrong\n", requests - wrong, wrong);
  std::fflush(stdout);

  bool ok = true;
  if (wrong > 0) {
    std::fprintf(stderr, "%s: %lld wrong replies; first: %s\n", kName, wrong, first_wrong.c_str());
    ok = false;
  }
  if (!failure.empty()) {
    std::fprintf(stderr, "%s: %s\n", kName, failure.c_str());
    ok = false;
  }
  if (o.quit && !send_quit(o.socket_path)) ok = false;
  return ok ? 0 : 1;
}
