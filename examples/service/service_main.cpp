// cilk_service: a long-running request server for trying `cilkprof attach` on a
// live process (docs/EXAMPLES.md, "The example service"). It listens on a Unix
// stream socket, reads one request per line (fib N, sort N [SEED], nqueens N, ping,
// quit; service/requests.hpp) and answers each with one line, doing the work with
// the Cilk runtime: requests are served one at a time, each one in parallel.
//
// One thread runs the poll loop and every request (the runtime binds one entering
// thread at a time anyway, docs/RUNTIME.md "Entering"); the runtime's workers do
// the parallel part. SIGTERM or SIGINT (systemctl stop), or a `quit` request: the
// request in progress finishes, the socket file is removed, exit status 0.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "service/flags.hpp"
#include "service/kernels.hpp"
#include "service/requests.hpp"
#include "service/systemd_notify.hpp"
#include "service/unix_socket.hpp"

namespace svc = cilk_service;

namespace {

constexpr const char* kName = "cilk_service";
constexpr std::size_t kMaxClients = 256;

struct Options {
  std::string socket_path;
  long long log_every = 1000;  // requests per stderr line; 0: none
};

void print_usage() {
  std::printf(
      "Usage: %s [--socket PATH] [--log-every N]\n\n"
      "Serves Cilk-parallel requests on a Unix stream socket, one request per line:\n"
      "  fib N           -> ok <fib(N)>                  (N 0..%lld)\n"
      "  sort N [SEED]   -> ok <min> <median> <max>      (N 1..%lld random keys from SEED, default 1)\n"
      "  nqueens N       -> ok <solutions>               (N 1..%lld)\n"
      "  ping            -> ok pong\n"
      "  quit            -> ok bye, and the service stops\n"
      "A bad request gets 'error <why>'. Drive it with cilk_service_load.\n\n"
      "Options:\n"
      "  --socket PATH   where to listen (default %s; mode 0600)\n"
      "  --log-every N   one stderr line per N requests (default 1000, 0: none)\n\n"
      "Environment: CILK_NWORKERS sets the number of workers.\n"
      "Stops on SIGTERM, SIGINT or a quit request: exit status 0. 1: cannot listen, 2: bad option.\n",
      kName, svc::kMaxFib, svc::kMaxSort, svc::kMaxQueens, svc::default_socket_path().c_str());
}

Options parse_options(int argc, char** argv) {
  Options options;
  options.socket_path = svc::default_socket_path();
  svc::Flags flags(kName, argc, argv);
  std::string value;
  while (!flags.done()) {
    if (flags.is("--help") || flags.is("-h")) {
      print_usage();
      std::exit(0);
    } else if (flags.value("--socket", &value)) {
      options.socket_path = value;
    } else if (flags.value("--log-every", &value)) {
      options.log_every = flags.integer("--log-every", value, 0, 1'000'000'000);
    } else {
      flags.unknown();
    }
  }
  return options;
}

// The stop signal's self-pipe: the handler only writes one byte (async-signal-safe),
// the poll loop sees it between requests.
int g_stop_pipe_write = -1;
volatile sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int signal_number) {
  const int saved_errno = errno;
  g_stop_signal = signal_number;
  const char byte = 1;
  [[maybe_unused]] const ssize_t ignored = write(g_stop_pipe_write, &byte, 1);
  errno = saved_errno;
}

bool install_stop_signals(int* read_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return false;
  g_stop_pipe_write = fds[1];
  *read_end = fds[0];
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that went away is a failed send, not a crash
  return true;
}

// Request counts and the stderr progress line.
class Stats {
 public:
  explicit Stats(long long log_every) : log_every_(log_every), last_log_(Clock::now()) {}

  void count(const char* kind_or_null) {
    ++total_;
    if (kind_or_null == nullptr) ++errors_;
    else if (std::strcmp(kind_or_null, "fib") == 0) ++fib_;
    else if (std::strcmp(kind_or_null, "sort") == 0) ++sort_;
    else if (std::strcmp(kind_or_null, "nqueens") == 0) ++nqueens_;
    if (log_every_ > 0 && total_ % log_every_ == 0) {
      const auto now = Clock::now();
      const double seconds = std::chrono::duration<double>(now - last_log_).count();
      last_log_ = now;
      std::fprintf(stderr, "%s: %lld requests (fib %lld, sort %lld, nqueens %lld, errors %lld); %.1f requests/s since the last line\n",
                   kName, total_, fib_, sort_, nqueens_, errors_, seconds > 0 ? log_every_ / seconds : 0.0);
    }
  }
  long long total() const { return total_; }

 private:
  using Clock = std::chrono::steady_clock;
  long long log_every_;
  Clock::time_point last_log_;
  long long total_ = 0, fib_ = 0, sort_ = 0, nqueens_ = 0, errors_ = 0;
};

struct Client {
  int fd;
  svc::LineReader reader;
  explicit Client(int f) : fd(f), reader(f) {}
  ~Client() { close(fd); }
};

enum class ClientState { kOpen, kClosed, kQuit };

// Answers every complete line the client has sent. kQuit after a `quit` request.
ClientState serve_lines(Client& client, Stats& stats) {
  std::string line;
  while (g_stop_signal == 0 && client.reader.take_line(&line)) {
    svc::Request request;
    std::string error;
    std::string reply;
    const char* counted = nullptr;
    if (line.size() > svc::kMaxLineBytes) {
      reply = "error request line too long";
    } else if (!svc::parse_request(line, &request, &error)) {
      reply = "error " + error;
    } else {
      reply = svc::compute(request);
      counted = svc::kind_name(request.kind);
    }
    stats.count(counted);
    if (!svc::send_all(client.fd, reply + "\n")) return ClientState::kClosed;
    if (counted != nullptr && request.kind == svc::Kind::kQuit) return ClientState::kQuit;
  }
  if (client.reader.buffered() > svc::kMaxLineBytes) {
    svc::send_all(client.fd, "error request line too long; closing the connection\n");
    return ClientState::kClosed;
  }
  return ClientState::kOpen;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  int stop_pipe = -1;
  if (!install_stop_signals(&stop_pipe)) {
    std::fprintf(stderr, "%s: cannot create the signal pipe: %s\n", kName, std::strerror(errno));
    return 1;
  }
  std::string error;
  const int listener = svc::listen_unix(options.socket_path, &error);
  if (listener < 0) {
    std::fprintf(stderr, "%s: %s\n", kName, error.c_str());
    return 1;
  }
  std::fprintf(stderr, "%s: listening on %s (pid %d)\n", kName, options.socket_path.c_str(),
               static_cast<int>(getpid()));
  svc::notify_systemd("READY=1");

  Stats stats(options.log_every);
  std::vector<std::unique_ptr<Client>> clients;
  bool quit = false;
  while (!quit && g_stop_signal == 0) {
    std::vector<pollfd> fds;
    fds.push_back({stop_pipe, POLLIN, 0});
    fds.push_back({listener, POLLIN, 0});
    for (const auto& c : clients) fds.push_back({c->fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;  // a stop signal, or the profiler's sampling signal
      std::fprintf(stderr, "%s: poll: %s\n", kName, std::strerror(errno));
      break;
    }
    if (fds[0].revents != 0) break;
    // Clients first, in the order they came: fds[i + 2] is clients[i].
    std::vector<std::unique_ptr<Client>> still_open;
    for (std::size_t i = 0; i < clients.size(); ++i) {
      ClientState state = ClientState::kOpen;
      if (!quit && (fds[i + 2].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        state = clients[i]->reader.fill_once() ? serve_lines(*clients[i], stats) : ClientState::kClosed;
      }
      if (state == ClientState::kQuit) quit = true;
      if (state == ClientState::kOpen) still_open.push_back(std::move(clients[i]));
    }
    clients = std::move(still_open);
    if (!quit && (fds[1].revents & POLLIN) != 0) {
      const int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0 && clients.size() >= kMaxClients) {
        svc::send_all(fd, "error too many connections; try again later\n");
        close(fd);
      } else if (fd >= 0) {
        clients.push_back(std::make_unique<Client>(fd));
      }
    }
  }

  svc::notify_systemd("STOPPING=1");
  clients.clear();
  close(listener);
  unlink(options.socket_path.c_str());
  const char* why = quit ? "a quit request" : g_stop_signal == SIGINT ? "SIGINT" : g_stop_signal == SIGTERM ? "SIGTERM" : "an error";
  std::fprintf(stderr, "%s: stopped by %s after %lld requests\n", kName, why, stats.total());
  return (quit || g_stop_signal != 0) ? 0 : 1;
}
