// The aggregator server (see server.h): Asio I/O thread with one strand per
// connection, a writer thread that builds and writes profiles.
#include "cilkprof/aggregator/server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <condition_variable>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "cilkprof/aggregator/framing.h"
#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/session.h"
#include "listeners.h"
#include "log_limiter.h"
#include "profile_writer.h"

namespace cilkprof::aggregator {
namespace asio = boost::asio;
using local_stream = asio::local::stream_protocol;
using tcp = asio::ip::tcp;

using internal::FinishedSession;
using internal::ProfileWriter;

namespace {

uint64_t NowUnixNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

class ConnectionBase {
 public:
  virtual ~ConnectionBase() = default;
  // Ends the connection from outside (shutdown): its data is written as
  // "connection lost". Thread-safe.
  virtual void Close() = 0;
};

// What a connection needs from the server.
class ConnectionOwner {
 public:
  virtual size_t max_frame_bytes() const = 0;
  virtual void CountDropped() = 0;
  // Limits the per-connection warnings (drops, read errors) under a flood.
  virtual internal::LogLimiter& warning_limiter() = 0;
  // Called on the connection's strand when its Hello has been merged.
  virtual void HelloArrived(uint64_t sequence, const wire::Hello& hello) = 0;
  // Called once per connection, on its strand, when it ends.
  virtual void ConnectionEnded(uint64_t sequence, std::unique_ptr<Session> session,
                               bool has_data) = 0;

 protected:
  ~ConnectionOwner() = default;
};

}  // namespace

struct Aggregator::Impl final : ConnectionOwner {
  explicit Impl(AggregatorOptions opts, SymbolSourceFactory symbols)
      : options(std::move(opts)),
        unix_acceptor(io),
        tcp_acceptor(io),
        accept_retry(io),
        exec_timer(io),
        work(asio::make_work_guard(io)),
        writer(options, std::move(symbols)) {}

  template <class Acceptor>
  void Accept(Acceptor* acceptor);
  template <class Acceptor>
  void AcceptBacklogAndClose(Acceptor* acceptor);
  template <class Socket>
  void StartConnection(Socket socket);
  size_t max_frame_bytes() const override { return options.max_frame_bytes; }
  void CountDropped() override { dropped.fetch_add(1, std::memory_order_relaxed); }
  internal::LogLimiter& warning_limiter() override { return limiter; }
  void HelloArrived(uint64_t sequence, const wire::Hello& hello) override;
  void ConnectionEnded(uint64_t sequence, std::unique_ptr<Session> session,
                       bool has_data) override;

  // Exec chains (server.h): the connections of one process in the order its images
  // started. Not by sequence alone: Finish() may accept the last connections of the
  // backlog before one whose accept had completed already.
  using Clock = std::chrono::steady_clock;
  using ProcessId = std::pair<std::string, uint32_t>;  // (hostname, pid)
  struct ImageOrder {
    uint64_t start_unix_ns;  // Hello.start_unix_ns
    uint32_t sequence;
    auto operator<=>(const ImageOrder&) const = default;
  };
  struct Image {
    uint32_t ppid = 0;
    std::unique_ptr<Session> session;  // set when the connection ended
    uint64_t end_unix_ns = 0;
    std::optional<Clock::time_point> successor_deadline;  // ended by exec: wait until
  };
  // Writes the chains of `process` that are complete: the images up to one that did not
  // end by exec, or whose successor did not come (`flush` forces that: at Finish).
  void ResolveChains(const ProcessId& process, bool flush);
  void WriteChain(std::vector<std::pair<ImageOrder, Image>> chain);
  void WriteProcess(uint32_t sequence, std::unique_ptr<Session> session, uint64_t end_unix_ns);
  // Arms exec_timer for the earliest successor deadline (I/O thread only).
  void ArmExecTimer();
  void OnExecTimer();

  AggregatorOptions options;
  asio::io_context io;
  local_stream::acceptor unix_acceptor;
  tcp::acceptor tcp_acceptor;
  asio::steady_timer accept_retry;
  asio::steady_timer exec_timer;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  ino_t socket_inode = 0;
  uint16_t tcp_port = 0;
  ProfileWriter writer;
  std::thread io_thread;

  // 20 connection warnings per 10 s; the counters keep the full story.
  internal::LogLimiter limiter{20, std::chrono::seconds(10)};
  std::atomic<uint64_t> accepted{0};
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint32_t> next_sequence{0};

  std::mutex mutex;
  std::condition_variable connections_changed;
  std::unordered_map<uint64_t, std::weak_ptr<ConnectionBase>> open;  // by sequence
  bool finished = false;
  std::vector<WrittenProfile> result;

  std::mutex chains_mutex;  // guards the two below
  std::map<ProcessId, std::map<ImageOrder, Image>> chains;
  std::vector<WrittenProfile> recorded_nothing;  // left out (skip_empty_profiles)
};

namespace {

// One agent connection on its own strand: read, decode, merge; at the end hand the
// session to the writer.
template <class Socket>
class Connection final : public ConnectionBase,
                         public std::enable_shared_from_this<Connection<Socket>> {
 public:
  Connection(ConnectionOwner* server, Socket socket, uint32_t sequence)
      : server_(server),
        socket_(std::move(socket)),
        sequence_(sequence),
        decoder_(server->max_frame_bytes()),
        session_(std::make_unique<Session>()) {}

  // A connection always ends through End(); this only guards against a handler chain
  // lost some other way, so that Finish() never waits for it forever.
  ~Connection() override {
    if (!ended_ && session_) {
      ended_ = true;
      const bool has_data = session_->has_hello();
      server_->ConnectionEnded(sequence_, std::move(session_), has_data);
    }
  }

  // Starts reading, on the connection's strand.
  void Start() {
    asio::dispatch(socket_.get_executor(), [self = this->shared_from_this()] { self->ReadMore(); });
  }

  // At shutdown, the bytes the agent already sent are merged first: they sit in the
  // socket's receive buffer, or in buffer_ if the pending read already took them, and
  // would otherwise be lost. So the pending read is cancelled rather than bypassed: its
  // handler (with the bytes it took, or aborted) sees closing_ and merges the rest.
  // A connection that has not ended always has a read pending, or its completion or
  // its first ReadMore queued on the strand, so the handler always comes.
  void Close() override {
    asio::dispatch(socket_.get_executor(), [self = this->shared_from_this()] {
      if (self->ended_) return;
      self->closing_ = true;
      boost::system::error_code ignored;
      self->socket_.cancel(ignored);
    });
  }

 private:
  void ReadMore() {
    if (ended_) return;
    if (closing_) {  // shutdown: no more waiting for the agent
      MergeBufferedThenEnd();
      return;
    }
    socket_.async_read_some(asio::buffer(buffer_),
                            [self = this->shared_from_this()](boost::system::error_code ec,
                                                              size_t n) { self->OnRead(ec, n); });
  }

  void OnRead(boost::system::error_code ec, size_t n) {
    if (ended_) return;
    if (!ec) {
      if (Consume(std::string_view(buffer_.data(), n))) {
        ReadMore();
      }
      return;
    }
    if (ec == asio::error::eof) {
      if (Status truncated = decoder_.Finish(); !truncated.ok()) {
        Drop(truncated.message());
      } else {
        End();
      }
    } else if (closing_) {
      MergeBufferedThenEnd();
    } else if (ec == asio::error::operation_aborted) {
      End();
    } else {
      if (uint64_t suppressed = 0; server_->warning_limiter().Allow(&suppressed)) {
        spdlog::warn("connection #{}{}: read error ({}); keeping the data received{}", sequence_,
                     Who(), ec.message(), Suppressed(suppressed));
      }
      End();
    }
  }

  // Feeds bytes through the decoder into the session; false once the connection is
  // dropped.
  bool Consume(std::string_view bytes) {
    decoder_.Feed(bytes);
    wire::AgentMessage message;
    while (decoder_.Next(&message)) {
      const bool had_hello = session_->has_hello();
      if (Status status = session_->Apply(message); !status.ok()) {
        Drop("protocol violation: " + status.message());
        return false;
      }
      if (!had_hello && session_->has_hello()) {
        const wire::Hello& hello = session_->hello();
        spdlog::info("connection #{}: pid {} ({}) connected, clock {}, period {} ns", sequence_,
                     hello.pid(), hello.executable(), hello.clock(), hello.period_ns());
        server_->HelloArrived(sequence_, hello);
      }
    }
    if (!decoder_.status().ok()) {
      Drop(decoder_.status().message());
      return false;
    }
    return true;
  }

  void MergeBufferedThenEnd() {
    boost::system::error_code ec;
    socket_.non_blocking(true, ec);
    while (!ec) {
      const size_t n = socket_.read_some(asio::buffer(buffer_), ec);
      if (ec) break;
      if (!Consume(std::string_view(buffer_.data(), n))) return;  // dropped and ended
    }
    if (ec == asio::error::eof) {
      if (Status truncated = decoder_.Finish(); !truncated.ok()) {
        Drop(truncated.message());
        return;
      }
    }
    End();
  }

  static std::string Suppressed(uint64_t n) {
    return n == 0 ? std::string() : fmt::format(" ({} similar warnings suppressed)", n);
  }

  std::string Who() const {
    if (!session_->has_hello()) return "";
    return " (pid " + std::to_string(session_->hello().pid()) + ")";
  }

  void Drop(const std::string& reason) {
    if (uint64_t suppressed = 0; server_->warning_limiter().Allow(&suppressed)) {
      spdlog::warn("dropping connection #{}{}: {}{}{}", sequence_, Who(), reason,
                   session_->has_hello() ? "; keeping the data merged before" : "",
                   Suppressed(suppressed));
    }
    server_->CountDropped();
    session_->MarkDropped(reason);
    End();
  }

  void End() {
    if (ended_) return;
    ended_ = true;
    boost::system::error_code ignored;
    socket_.close(ignored);
    const bool has_data = session_->has_hello();
    server_->ConnectionEnded(sequence_, std::move(session_), has_data);
  }

  ConnectionOwner* server_;
  Socket socket_;
  const uint32_t sequence_;
  FrameDecoder decoder_;
  std::unique_ptr<Session> session_;
  std::array<char, 64 * 1024> buffer_{};
  bool closing_ = false;
  bool ended_ = false;
};

}  // namespace

template <class Acceptor>
void Aggregator::Impl::Accept(Acceptor* acceptor) {
  acceptor->async_accept(
      asio::make_strand(io), [this, acceptor](boost::system::error_code ec, auto socket) {
        if (ec == asio::error::operation_aborted) return;
        if (ec && !acceptor->is_open()) return;
        if (ec) {
          // Out of file descriptors and the like: back off instead of spinning.
          spdlog::warn("accepting an agent connection failed ({}); retrying", ec.message());
          accept_retry.expires_after(std::chrono::milliseconds(100));
          accept_retry.async_wait([this, acceptor](boost::system::error_code wait_ec) {
            if (!wait_ec && acceptor->is_open()) Accept(acceptor);
          });
          return;
        }
        // Accepted just before Finish() closed the acceptor: still served.
        StartConnection(std::move(socket));
        if (acceptor->is_open()) Accept(acceptor);
      });
}

template <class Socket>
void Aggregator::Impl::StartConnection(Socket socket) {
  const uint32_t sequence = next_sequence.fetch_add(1);
  accepted.fetch_add(1, std::memory_order_relaxed);
  auto connection = std::make_shared<Connection<Socket>>(this, std::move(socket), sequence);
  {
    std::lock_guard lock(mutex);
    open.emplace(sequence, connection);
  }
  connection->Start();
}

// Accepts what is already waiting in the listen backlog, then closes the acceptor:
// an agent whose connect() completed before Finish() is served, not refused.
template <class Acceptor>
void Aggregator::Impl::AcceptBacklogAndClose(Acceptor* acceptor) {
  if (!acceptor->is_open()) return;
  boost::system::error_code ec;
  acceptor->non_blocking(true, ec);
  while (!ec) {
    typename Acceptor::protocol_type::socket socket(asio::make_strand(io));
    acceptor->accept(socket, ec);
    if (!ec) StartConnection(std::move(socket));
  }
  acceptor->close(ec);
}

void Aggregator::Impl::HelloArrived(uint64_t sequence, const wire::Hello& hello) {
  std::lock_guard lock(chains_mutex);
  const ImageOrder order{hello.start_unix_ns(), static_cast<uint32_t>(sequence)};
  chains[ProcessId(hello.hostname(), hello.pid())][order].ppid = hello.ppid();
}

void Aggregator::Impl::ConnectionEnded(uint64_t sequence, std::unique_ptr<Session> session,
                                       bool has_data) {
  if (has_data) {
    const ProcessId process(session->hello().hostname(), session->hello().pid());
    bool waits = false;
    {
      std::lock_guard lock(chains_mutex);
      const ImageOrder order{session->hello().start_unix_ns(), static_cast<uint32_t>(sequence)};
      Image& image = chains[process][order];
      image.ppid = session->hello().ppid();
      image.end_unix_ns = NowUnixNs();
      if (session->ended_by_exec()) {
        image.successor_deadline = Clock::now() + options.exec_successor_wait;
        waits = true;
      }
      image.session = std::move(session);
      ResolveChains(process, false);
    }
    if (waits) asio::dispatch(io, [this] { ArmExecTimer(); });
  }
  std::lock_guard lock(mutex);
  open.erase(sequence);
  connections_changed.notify_all();
}

void Aggregator::Impl::ResolveChains(const ProcessId& process, bool flush) {
  auto found = chains.find(process);
  if (found == chains.end()) return;
  std::map<ImageOrder, Image>& images = found->second;
  const Clock::time_point now = Clock::now();
  while (!images.empty()) {
    // The first chain: images while each ended by exec and the next is its successor.
    auto last = images.begin();
    for (;; ++last) {
      if (!last->second.session) return;  // still connected: what follows waits for it
      const auto next = std::next(last);
      if (!last->second.session->ended_by_exec()) break;
      if (next == images.end()) {
        if (flush || *last->second.successor_deadline <= now) break;
        return;  // the new image may still connect
      }
      if (next->second.ppid != last->second.ppid) break;  // the pid was reused
    }
    const auto end = std::next(last);
    std::vector<std::pair<ImageOrder, Image>> chain;
    for (auto it = images.begin(); it != end; ++it) chain.emplace_back(it->first, std::move(it->second));
    images.erase(images.begin(), end);
    WriteChain(std::move(chain));
  }
  chains.erase(found);
}

void Aggregator::Impl::WriteChain(std::vector<std::pair<ImageOrder, Image>> chain) {
  // A process is named by its earliest connection (`cilkprof run`'s main profile is
  // the one holding connection 0).
  auto first_sequence = [&](size_t from, size_t to) {
    uint32_t first = chain[from].first.sequence;
    for (size_t i = from; i < to; ++i) first = std::min(first, chain[i].first.sequence);
    return first;
  };
  size_t begin = 0;
  std::unique_ptr<Session> folded = std::move(chain.front().second.session);
  for (size_t i = 1; i < chain.size(); ++i) {
    std::unique_ptr<Session>& next = chain[i].second.session;
    if (Status status = next->FoldExecPredecessor(*folded); !status.ok()) {
      spdlog::warn("pid {}: the profiles of {} and of {}, which it exec'd, are written apart: {}",
                   next->hello().pid(), folded->hello().executable(), next->hello().executable(),
                   status.message());
      WriteProcess(first_sequence(begin, i), std::move(folded), chain[i - 1].second.end_unix_ns);
      begin = i;
    }
    folded = std::move(next);
  }
  WriteProcess(first_sequence(begin, chain.size()), std::move(folded), chain.back().second.end_unix_ns);
}

void Aggregator::Impl::WriteProcess(uint32_t sequence, std::unique_ptr<Session> session,
                                    uint64_t end_unix_ns) {
  const wire::Hello& hello = session->hello();
  FinishedSession work;
  work.key.pid = hello.pid();
  work.key.ppid = hello.ppid();
  work.key.executable = hello.executable();
  work.key.sequence = sequence;
  for (const profile::ExecImage& image : session->exec_chain()) {
    work.key.exec_chain.push_back(image.executable());
  }
  if (options.skip_empty_profiles && sequence != 0 && session->RecordedNothing()) {
    WrittenProfile skipped;
    skipped.process = std::move(work.key);
    skipped.recorded_nothing = true;
    recorded_nothing.push_back(std::move(skipped));
    return;
  }
  work.end_unix_ns = end_unix_ns;
  work.session = std::move(session);
  writer.Submit(std::move(work));
}

void Aggregator::Impl::ArmExecTimer() {
  std::optional<Clock::time_point> earliest;
  {
    std::lock_guard lock(chains_mutex);
    for (const auto& [process, images] : chains) {
      // A chain behind a connection still open is resolved when that one ends.
      const bool all_ended = std::all_of(images.begin(), images.end(),
                                         [](const auto& entry) { return entry.second.session != nullptr; });
      const Image& tail = images.rbegin()->second;
      if (all_ended && tail.successor_deadline &&
          (!earliest || *tail.successor_deadline < *earliest)) {
        earliest = tail.successor_deadline;
      }
    }
  }
  if (!earliest) return;
  exec_timer.expires_at(*earliest);  // cancels an earlier wait
  exec_timer.async_wait([this](boost::system::error_code ec) {
    if (!ec) OnExecTimer();
  });
}

void Aggregator::Impl::OnExecTimer() {
  {
    std::lock_guard lock(chains_mutex);
    std::vector<ProcessId> processes;
    for (const auto& entry : chains) processes.push_back(entry.first);
    for (const ProcessId& process : processes) ResolveChains(process, false);
  }
  ArmExecTimer();
}

Aggregator::Aggregator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Aggregator::~Aggregator() {
  if (impl_) Finish(std::chrono::milliseconds(0));
}

Result<std::unique_ptr<Aggregator>> Aggregator::Start(AggregatorOptions options,
                                                      SymbolSourceFactory symbols) {
  if (!symbols) return Status::Error("no symbolizer given to the aggregator");
  try {
    auto impl = std::make_unique<Impl>(std::move(options), std::move(symbols));
    CILKPROF_RETURN_IF_ERROR(internal::ListenUnix(impl->options.unix_socket_path,
                                                  &impl->unix_acceptor, &impl->socket_inode));
    if (!impl->options.tcp_endpoint.empty()) {
      if (Status status = internal::ListenTcp(impl->options.tcp_endpoint, &impl->tcp_acceptor);
          !status.ok()) {
        internal::RemoveUnixSocketIfOurs(impl->options.unix_socket_path, impl->socket_inode);
        return status;
      }
      boost::system::error_code ec;
      impl->tcp_port = impl->tcp_acceptor.local_endpoint(ec).port();
    }
    Impl* raw = impl.get();
    raw->Accept(&raw->unix_acceptor);
    if (raw->tcp_acceptor.is_open()) raw->Accept(&raw->tcp_acceptor);
    raw->io_thread = std::thread([raw] {
      try {
        raw->io.run();
      } catch (const std::exception& e) {
        spdlog::critical("the aggregator's I/O thread failed: {}", e.what());
      }
    });
    spdlog::info("aggregator listening on {}{}", raw->options.unix_socket_path,
                 raw->tcp_port ? fmt::format(" and TCP port {}", raw->tcp_port) : "");
    return std::unique_ptr<Aggregator>(new Aggregator(std::move(impl)));
  } catch (const std::exception& e) {
    return Status::Error(std::string("cannot start the aggregator: ") + e.what());
  }
}

std::vector<WrittenProfile> Aggregator::Finish(std::chrono::milliseconds drain) {
  Impl& impl = *impl_;
  {
    std::lock_guard lock(impl.mutex);
    if (impl.finished) return impl.result;
  }
  // 1. Stop accepting (on the I/O thread, which owns the acceptors).
  std::promise<void> stopped;
  asio::post(impl.io, [&impl, &stopped] {
    impl.AcceptBacklogAndClose(&impl.unix_acceptor);
    impl.AcceptBacklogAndClose(&impl.tcp_acceptor);
    impl.accept_retry.cancel();
    stopped.set_value();
  });
  stopped.get_future().wait();
  // An accept that completed just before the close has its handler queued already;
  // this barrier runs after it, so that connection is registered below.
  std::promise<void> barrier;
  asio::post(impl.io, [&barrier] { barrier.set_value(); });
  barrier.get_future().wait();
  // 2. Let open connections finish on their own for up to `drain`, then close them.
  std::unique_lock lock(impl.mutex);
  impl.connections_changed.wait_for(lock, drain, [&] { return impl.open.empty(); });
  if (!impl.open.empty()) {
    spdlog::info("closing {} agent connection(s) still open at shutdown", impl.open.size());
  }
  std::vector<std::shared_ptr<ConnectionBase>> still_open;
  for (auto& [sequence, weak] : impl.open) {
    if (auto connection = weak.lock()) still_open.push_back(std::move(connection));
  }
  lock.unlock();
  for (auto& connection : still_open) connection->Close();
  still_open.clear();
  lock.lock();
  impl.connections_changed.wait(lock, [&] { return impl.open.empty(); });
  lock.unlock();
  // 3. Write everything (processes that exec'd included, on the I/O thread with their
  // timer), then stop the threads.
  std::promise<void> chains_written;
  asio::post(impl.io, [&impl, &chains_written] {
    impl.exec_timer.cancel();
    std::lock_guard chains_lock(impl.chains_mutex);
    std::vector<Impl::ProcessId> processes;
    for (const auto& entry : impl.chains) processes.push_back(entry.first);
    for (const auto& process : processes) impl.ResolveChains(process, true);
    chains_written.set_value();
  });
  chains_written.get_future().wait();
  impl.writer.StopAndJoin();
  impl.work.reset();
  impl.io.stop();
  if (impl.io_thread.joinable()) impl.io_thread.join();
  internal::RemoveUnixSocketIfOurs(impl.options.unix_socket_path, impl.socket_inode);
  lock.lock();
  impl.finished = true;
  impl.result = impl.writer.written();
  std::lock_guard chains_lock(impl.chains_mutex);
  impl.result.insert(impl.result.end(), impl.recorded_nothing.begin(), impl.recorded_nothing.end());
  return impl.result;
}

uint64_t Aggregator::connections_accepted() const { return impl_->accepted.load(); }
uint64_t Aggregator::connections_dropped() const { return impl_->dropped.load(); }
uint64_t Aggregator::connections_open() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->open.size();
}
uint16_t Aggregator::tcp_port() const { return impl_->tcp_port; }

}  // namespace cilkprof::aggregator
