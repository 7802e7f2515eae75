#include "test_receiver.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "frames.h"

namespace cilkprof::agent::testing {

TestReceiver::TestReceiver() {
  char pattern[] = "/tmp/cilkprof-agent-test-XXXXXX";
  if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  socket_path_ = dir_ + "/aggregator.sock";
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path_.c_str(), sizeof addr.sun_path - 1);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listen_fd_, 64) != 0) {
    throw std::runtime_error("cannot listen on " + socket_path_);
  }
  fcntl(listen_fd_, F_SETFL, O_NONBLOCK);
  if (pipe2(stop_pipe_, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  running_ = pthread_create(&thread_, nullptr, Loop, this) == 0;
}

TestReceiver::~TestReceiver() {
  if (running_) Finish();
  for (Connection& c : connections_) {
    if (c.open) close(c.fd);
  }
  close(listen_fd_);
  close(stop_pipe_[0]);
  close(stop_pipe_[1]);
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void TestReceiver::AcceptAll() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    connections_.push_back(Connection{fd, true, {}});
  }
}

bool TestReceiver::ReadSome(size_t connection) {
  int fd;
  {
    std::lock_guard<std::mutex> lock(mu_);
    fd = connections_[connection].fd;
  }
  char buf[65536];
  const ssize_t n = read(fd, buf, sizeof buf);
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) return false;
  std::lock_guard<std::mutex> lock(mu_);
  connections_[connection].bytes.append(buf, static_cast<size_t>(n));
  return true;
}

void* TestReceiver::Loop(void* opaque) {
  auto* self = static_cast<TestReceiver*>(opaque);
  for (;;) {
    std::vector<pollfd> fds = {{self->stop_pipe_[0], POLLIN, 0}, {self->listen_fd_, POLLIN, 0}};
    std::vector<size_t> which;
    {
      std::lock_guard<std::mutex> lock(self->mu_);
      for (size_t i = 0; i < self->connections_.size(); ++i) {
        if (!self->connections_[i].open) continue;
        fds.push_back({self->connections_[i].fd, POLLIN, 0});
        which.push_back(i);
      }
    }
    if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) break;
    if (fds[0].revents) break;
    if (fds[1].revents) self->AcceptAll();
    for (size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents && !self->ReadSome(which[i - 2])) {
        std::lock_guard<std::mutex> lock(self->mu_);
        self->connections_[which[i - 2]].open = false;
        close(fds[i].fd);
      }
    }
  }
  return nullptr;
}

std::vector<ReceivedConnection> TestReceiver::Finish() {
  if (running_) {
    (void)!write(stop_pipe_[1], "x", 1);
    pthread_join(thread_, nullptr);
    running_ = false;
    // The profiled processes have exited: whatever is left is readable to its end.
    AcceptAll();
    for (size_t i = 0; i < connections_.size(); ++i) {
      if (!connections_[i].open) continue;
      while (ReadSome(i)) {
      }
      close(connections_[i].fd);
      connections_[i].open = false;
    }
    for (const Connection& connection : connections_) {
      ReceivedConnection c;
      c.messages = ParseFrames(connection.bytes, &c.error);
      finished_.push_back(std::move(c));
    }
  }
  return finished_;
}

double ThreadTotals::total_samples() const {
  double sum = 0;
  for (const auto& [node, value] : samples) sum += value;
  return sum;
}

double ThreadTotals::total_work() const {
  double sum = 0;
  for (const auto& [node, value] : work) sum += value;
  return sum;
}

ProcessProfile Fold(const std::vector<wire::AgentMessage>& messages) {
  ProcessProfile p;
  for (size_t i = 0; i < messages.size(); ++i) {
    const wire::AgentMessage& m = messages[i];
    if (m.has_hello()) {
      if (i != 0) p.problems.push_back("Hello is not the first message");
      p.starts_with_hello = i == 0;
      p.hello = m.hello();
    } else if (m.has_goodbye()) {
      if (i + 1 != messages.size()) p.problems.push_back("Goodbye is not the last message");
      p.has_goodbye = true;
      p.goodbye_reason = m.goodbye().reason();
      p.unseen_thread_cpu_ns = m.goodbye().unseen_thread_cpu_ns();
    } else if (m.has_delta()) {
      for (const wire::LoadModule& mod : m.delta().modules()) p.modules[mod.id()] = mod;
      for (const wire::ThreadDelta& t : m.delta().threads()) {
        ThreadTotals& tt = p.threads[t.tid()];
        if (tt.exited) p.problems.push_back("delta after the thread's exit");
        tt.tid = t.tid();
        tt.thread_index = t.thread_index();
        if (!t.name().empty()) tt.name = t.name();
        tt.exited = tt.exited || t.exited();
        for (const wire::NewNode& n : t.nodes()) {
          if (tt.nodes.count(n.id())) p.problems.push_back("node sent twice");
          if (n.parent() != 0 && !tt.nodes.count(n.parent())) p.problems.push_back("node before its parent");
          if (n.module_id() != 0 && !p.modules.count(n.module_id()))
            p.problems.push_back("node refers to an unannounced module");
          tt.nodes[n.id()] = n;
        }
        for (const wire::NodeMetrics& nm : t.metrics()) {
          // Node 0, the implicit root, may carry overhead with no logical context.
          if (nm.node() != 0 && !tt.nodes.count(nm.node())) p.problems.push_back("metrics of an unknown node");
          if (nm.values_size() != p.hello.metrics_size()) {
            p.problems.push_back("metrics with a wrong number of values");
            continue;
          }
          tt.samples[nm.node()] += nm.values(0);
          tt.work[nm.node()] += nm.values(1);
        }
        tt.counter_samples += t.counters().samples();
        tt.partial_unwinds += t.counters().partial_unwinds();
        tt.cpu_ns += t.counters().cpu_ns();
        tt.unsampled_ns += t.counters().unsampled_ns();
        tt.signal_blocked += t.counters().signal_blocked();
      }
    } else {
      p.problems.push_back("empty AgentMessage");
    }
  }
  return p;
}

}  // namespace cilkprof::agent::testing
