// The aggregator server (see server.h): Asio I/O thread with one strand per
// connection (connection.h), a writer thread that builds and writes profiles. Who may
// connect, and how much each client may ask, is decided here when a connection is
// accepted (peer_limits.h) and when its profile is about to be written.
#include "cilkprof/aggregator/server.h"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
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
#include <type_traits>
#include <unordered_map>

#include "cilkprof/aggregator/framing.h"
#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/session.h"
#include "connection.h"
#include "listeners.h"
#include "log_limiter.h"
#include "memory_budget.h"
#include "peer_limits.h"
#include "profile_writer.h"
#include "tcp_auth.h"
#include "writer_turns.h"

namespace cilkprof::aggregator {
namespace asio = boost::asio;
using local_stream = asio::local::stream_protocol;
using tcp = asio::ip::tcp;

using internal::ConnectionBase;
using internal::FinishedSession;
using internal::PeerIdentity;
using internal::PeerLimits;
using internal::ProfileWriter;

namespace {

uint64_t NowUnixNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

internal::PeerLimitOptions LimitOptionsOf(const AggregatorOptions& o) {
  internal::PeerLimitOptions limits;
  limits.max_connections_per_client = o.max_connections_per_client;
  limits.max_connections_per_uid = o.max_connections_per_uid;
  limits.max_tcp_connections_per_address = o.max_tcp_connections_per_address;
  limits.max_profiles_per_client = o.max_profiles_per_client;
  limits.window = o.limit_window;
  return limits;
}

std::string UidList(const std::vector<uint32_t>& uids) {
  std::string list = uids.size() == 1 ? "uid " : "uids ";
  for (size_t i = 0; i < uids.size(); ++i) list += (i == 0 ? "" : ", ") + std::to_string(uids[i]);
  return list;
}

std::string WindowText(std::chrono::milliseconds window) {
  return window.count() % 1000 == 0 ? fmt::format("{} s", window.count() / 1000)
                                    : fmt::format("{} ms", window.count());
}

}  // namespace

struct Aggregator::Impl final : internal::ConnectionOwner {
  explicit Impl(AggregatorOptions opts, SymbolSourceFactory symbols)
      : options(std::move(opts)),
        unix_listener(io),
        tcp_listener(io),
        exec_timer(io),
        work(asio::make_work_guard(io)),
        budget(options.memory_budget_bytes),
        limits(LimitOptionsOf(options)),
        user_on_written(std::move(options.on_written)),
        writer_turns([this](FinishedSession work) { writer.Submit(std::move(work)); }),
        writer(options, std::move(symbols)) {
    if (options.window.count() > 0) {
      const uint64_t length = static_cast<uint64_t>(options.window.count());
      window_start.store(NowUnixNs() / length * length);
    }
    allowed_uids = options.allowed_peer_uids;
    if (allowed_uids.empty()) allowed_uids.push_back(static_cast<uint32_t>(::geteuid()));
    // The writer tells us when it is done with a profile, so that it gets the next one
    // in turn. Set before the first Submit, which orders it before the writer thread
    // reads it.
    options.on_written = [this](const WrittenProfile& written) {
      struct NextTurn {
        internal::WriterTurns* turns;
        ~NextTurn() { turns->FinishedOne(); }  // even if the user's callback throws
      } next{&writer_turns};
      if (user_on_written) user_on_written(written);
    };
  }

  // A listening socket. It always has an accept pending, or its retry timer after a
  // failed accept, until StopAccepting.
  template <class Acceptor>
  struct Listener {
    explicit Listener(asio::io_context& io) : acceptor(io), retry(io) {}
    Acceptor acceptor;
    asio::steady_timer retry;
    bool accepting = false;  // an async_accept is pending
  };
  template <class Acceptor>
  void Accept(Listener<Acceptor>* listener);
  // At Finish, on the I/O thread: every connection whose connect() completed is
  // served, in the order they connected (an exec'd image after the one it replaced),
  // then the listener is closed. An accept that completed already, its handler
  // queued, goes first: the pending accept is cancelled and its handler drains the
  // backlog.
  template <class Acceptor>
  void StopAccepting(Listener<Acceptor>* listener);
  template <class Acceptor>
  void AcceptBacklogAndClose(Listener<Acceptor>* listener);
  // Starts the connections waiting in the listen backlog (I/O thread): CutWindow's
  // window includes agents whose connect() completed before it.
  template <class Acceptor>
  void AcceptBacklog(Listener<Acceptor>* listener);
  void ListenerStopped();
  template <class Socket>
  void StartConnection(Socket socket);
  bool Admit(const PeerIdentity& peer);
  void Refused(std::atomic<uint64_t>* counter, const std::string& message);

  // ConnectionOwner
  size_t max_frame_bytes() const override { return options.max_frame_bytes; }
  internal::MemoryBudget& memory_budget() override { return budget; }
  std::chrono::milliseconds stall_timeout() const override { return options.stall_timeout; }
  uint64_t window_start_unix_ns() const override { return window_start.load(); }
  const std::string& tcp_token() const override { return token; }
  void CountDropped() override { dropped.fetch_add(1, std::memory_order_relaxed); }
  void CountRefusedAuthentication() override {
    refused_authentication.fetch_add(1, std::memory_order_relaxed);
  }
  internal::LogLimiter& warning_limiter() override { return limiter; }
  internal::LogLimiter& hello_limiter() override { return connected_limiter; }
  void HelloArrived(uint64_t sequence, const PeerIdentity& peer, const wire::Hello& hello) override;
  void ConnectionEnded(uint64_t sequence, const PeerIdentity& peer,
                       std::unique_ptr<Session> session, bool has_data) override;

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
    std::string client;  // PeerIdentity::ClientKey of its connection
    std::unique_ptr<Session> session;  // set when the connection ended
    uint64_t end_unix_ns = 0;
    std::optional<Clock::time_point> successor_deadline;  // ended by exec: wait until
  };
  // Writes the chains of `process` that are complete: the images up to one that did not
  // end by exec, or whose successor did not come (`flush` forces that: at Finish).
  void ResolveChains(const ProcessId& process, bool flush);
  // An exec'd image connects from the process of the image it replaced, so it is the
  // same client; a connection of that client accepted before an image of `images`,
  // still without its Hello, may be an earlier image of this process (the I/O thread
  // reads connections in turns: a later one can end before an earlier one is read),
  // and the chain waits for it. Only that client can delay it.
  bool EarlierImageMayBePending(const std::map<ImageOrder, Image>& images) const;
  void WriteChain(std::vector<std::pair<ImageOrder, Image>> chain);
  void WriteProcess(uint32_t sequence, const std::string& client, std::unique_ptr<Session> session,
                    uint64_t end_unix_ns);
  FinishedSession WorkFor(uint32_t sequence, const Session& session) const;
  // Whether `client` may have one more profile written now; if not, counts and logs it.
  bool AllowProfile(const std::string& client, const ProcessKey& key);
  // Continuous mode: the windows one CutWindow takes, and the profiles written of them.
  struct WindowCut {
    std::mutex mutex;
    std::condition_variable changed;
    size_t connections = 0;  // cut tasks posted
    size_t taken = 0;        // of them, done
    size_t submitted = 0;    // window profiles handed to the writer
    std::vector<WrittenProfile> written;
  };
  void WindowTaken(const std::shared_ptr<WindowCut>& cut, uint64_t end_unix_ns, uint32_t sequence,
                   const PeerIdentity& peer, std::unique_ptr<Session> window);
  // Arms exec_timer for the earliest successor deadline (I/O thread only).
  void ArmExecTimer();
  void OnExecTimer();

  AggregatorOptions options;
  asio::io_context io;
  Listener<local_stream::acceptor> unix_listener;
  Listener<tcp::acceptor> tcp_listener;
  bool stopping_accept = false;  // I/O thread only, as the two below
  int listeners_draining = 0;
  std::promise<void>* listeners_stopped = nullptr;
  asio::steady_timer exec_timer;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  ino_t socket_inode = 0;
  uint16_t tcp_port = 0;
  std::string token;  // TCP clients must present it
  std::vector<uint32_t> allowed_uids;
  internal::MemoryBudget budget;
  PeerLimits limits;

  // 20 connection warnings per 10 s; refusals, profiles not written and the lines that
  // say who connected have their own limiters, so a flood of one kind cannot hide the
  // others. The counters keep the full story.
  internal::LogLimiter limiter{20, std::chrono::seconds(10)};
  internal::LogLimiter connected_limiter{100, std::chrono::seconds(10)};
  internal::LogLimiter refusal_limiter{5, std::chrono::seconds(10)};
  internal::LogLimiter profile_limit_limiter{1, std::chrono::seconds(10)};
  std::atomic<uint64_t> accepted{0};
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> refused_uid{0};
  std::atomic<uint64_t> refused_limit{0};
  std::atomic<uint64_t> refused_rate{0};
  std::atomic<uint64_t> refused_authentication{0};
  std::atomic<uint64_t> profiles_over_limit{0};
  std::atomic<uint32_t> next_sequence{0};
  std::atomic<uint32_t> program_pid{0};  // SetProgramPid; 0: the first connection is the program
  std::atomic<uint64_t> window_start{0};  // continuous mode: the current window's start
  std::mutex cut_mutex;  // one CutWindow at a time, and none once Finish has begun
  bool finishing = false;  // guarded by cut_mutex

  std::mutex mutex;
  std::condition_variable connections_changed;
  std::unordered_map<uint64_t, std::weak_ptr<ConnectionBase>> open;  // by sequence
  bool finished = false;
  std::vector<WrittenProfile> result;

  std::mutex chains_mutex;  // guards the three below
  std::map<ProcessId, std::map<ImageOrder, Image>> chains;
  std::map<uint32_t, std::string> awaiting_hello;  // open connections without Hello: client
  std::vector<WrittenProfile> recorded_nothing;  // left out (skip_empty_profiles)

  // Before `writer`, so that they outlive its thread.
  std::function<void(const WrittenProfile&)> user_on_written;
  internal::WriterTurns writer_turns;  // the writer takes the clients' profiles in turn
  ProfileWriter writer;
  std::thread io_thread;
};

template <class Acceptor>
void Aggregator::Impl::Accept(Listener<Acceptor>* listener) {
  listener->accepting = true;
  listener->acceptor.async_accept(
      asio::make_strand(io), [this, listener](boost::system::error_code ec, auto socket) {
        listener->accepting = false;
        if (stopping_accept) {
          if (!ec) StartConnection(std::move(socket));
          AcceptBacklogAndClose(listener);
          ListenerStopped();
          return;
        }
        if (ec == asio::error::operation_aborted) return;
        if (ec && !listener->acceptor.is_open()) return;
        if (ec) {
          // Out of file descriptors and the like: back off instead of spinning.
          if (uint64_t suppressed = 0; refusal_limiter.Allow(&suppressed)) {
            spdlog::warn("accepting an agent connection failed ({}); retrying{}", ec.message(),
                         internal::SuppressedNote(suppressed));
          }
          listener->retry.expires_after(std::chrono::milliseconds(100));
          listener->retry.async_wait([this, listener](boost::system::error_code wait_ec) {
            if (!wait_ec && !stopping_accept) Accept(listener);
          });
          return;
        }
        StartConnection(std::move(socket));
        Accept(listener);
      });
}

template <class Acceptor>
void Aggregator::Impl::StopAccepting(Listener<Acceptor>* listener) {
  if (!listener->acceptor.is_open()) return;
  listener->retry.cancel();
  if (listener->accepting) {
    ++listeners_draining;
    boost::system::error_code ignored;
    listener->acceptor.cancel(ignored);  // its handler comes, with a connection or aborted
    return;
  }
  AcceptBacklogAndClose(listener);
}

void Aggregator::Impl::ListenerStopped() {
  if (--listeners_draining == 0) listeners_stopped->set_value();
}

void Aggregator::Impl::Refused(std::atomic<uint64_t>* counter, const std::string& message) {
  counter->fetch_add(1, std::memory_order_relaxed);
  if (uint64_t suppressed = 0; refusal_limiter.Allow(&suppressed)) {
    spdlog::warn("{}{}", message, internal::SuppressedNote(suppressed));
  }
}

// Whether `peer` may connect now; counts it in (limits) if so, else logs why not.
bool Aggregator::Impl::Admit(const PeerIdentity& peer) {
  if (peer.is_unix) {
    if (!peer.has_credentials) {
      Refused(&refused_uid, "refused a connection: the kernel did not tell who made it (SO_PEERCRED)");
      return false;
    }
    if (peer.uid != 0 &&
        std::find(allowed_uids.begin(), allowed_uids.end(), peer.uid) == allowed_uids.end()) {
      Refused(&refused_uid,
              fmt::format("refused a connection from uid {} (pid {}): only {} and root may send "
                          "profiles to this aggregator (cilkprofd --allow-uid {} admits that user)",
                          peer.uid, peer.pid, UidList(allowed_uids), peer.uid));
      return false;
    }
  }
  switch (limits.AdmitConnection(peer, PeerLimits::Clock::now())) {
    case PeerLimits::Admission::kAdmitted:
      return true;
    case PeerLimits::Admission::kClientBusy:
      Refused(&refused_limit,
              fmt::format("refused a connection from {}: it has {} connections open, the limit "
                          "per client (cilkprofd --max-connections-per-client)",
                          peer.Describe(), options.max_connections_per_client));
      return false;
    case PeerLimits::Admission::kUidBusy:
      Refused(&refused_limit,
              fmt::format("refused a connection from {}: uid {} has {} connections open, the "
                          "limit per uid (cilkprofd --max-connections-per-uid)",
                          peer.Describe(), peer.uid, options.max_connections_per_uid));
      return false;
    case PeerLimits::Admission::kTcpRate:
      Refused(&refused_rate,
              fmt::format("refused a TCP connection from {}: more than {} connections from that "
                          "address in {} (cilkprofd --max-tcp-connections-per-minute)",
                          peer.Describe(), options.max_tcp_connections_per_address,
                          WindowText(options.limit_window)));
      return false;
  }
  return false;
}

template <class Socket>
void Aggregator::Impl::StartConnection(Socket socket) {
  accepted.fetch_add(1, std::memory_order_relaxed);
  constexpr bool kUnix = std::is_same_v<typename Socket::protocol_type, local_stream>;
  PeerIdentity peer;
  if constexpr (kUnix) {
    peer = internal::UnixPeer(socket.native_handle());
  } else {
    peer.is_unix = false;
    boost::system::error_code ec;
    const tcp::endpoint remote = socket.remote_endpoint(ec);
    asio::ip::address address = remote.address();
    if (address.is_v6() && address.to_v6().is_v4_mapped()) {
      address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
    }
    peer.address = ec ? "an unknown address" : address.to_string();
    peer.port = ec ? 0 : remote.port();
  }
  if (!Admit(peer)) {
    boost::system::error_code ignored;
    socket.close(ignored);
    return;
  }
  const uint32_t sequence = next_sequence.fetch_add(1);
  {
    std::lock_guard lock(chains_mutex);
    awaiting_hello.emplace(sequence, peer.ClientKey());
  }
  auto connection = std::make_shared<internal::Connection<Socket>>(
      this, std::move(socket), sequence, peer, /*authenticate=*/!kUnix);
  {
    std::lock_guard lock(mutex);
    open.emplace(sequence, connection);
  }
  connection->Start();
}

// Accepts what is already waiting in the listen backlog, then closes the acceptor:
// an agent whose connect() completed before Finish() is served, not refused.
template <class Acceptor>
void Aggregator::Impl::AcceptBacklogAndClose(Listener<Acceptor>* listener) {
  Acceptor& acceptor = listener->acceptor;
  if (!acceptor.is_open()) return;
  boost::system::error_code ec;
  acceptor.non_blocking(true, ec);
  while (!ec) {
    typename Acceptor::protocol_type::socket socket(asio::make_strand(io));
    acceptor.accept(socket, ec);
    if (!ec) StartConnection(std::move(socket));
  }
  acceptor.close(ec);
}

template <class Acceptor>
void Aggregator::Impl::AcceptBacklog(Listener<Acceptor>* listener) {
  Acceptor& acceptor = listener->acceptor;
  if (stopping_accept || !acceptor.is_open()) return;
  boost::system::error_code ec;
  acceptor.non_blocking(true, ec);
  while (!ec) {
    typename Acceptor::protocol_type::socket socket(asio::make_strand(io));
    acceptor.accept(socket, ec);
    if (!ec) StartConnection(std::move(socket));
  }
}

void Aggregator::Impl::HelloArrived(uint64_t sequence, const PeerIdentity& peer,
                                    const wire::Hello& hello) {
  std::lock_guard lock(chains_mutex);
  awaiting_hello.erase(static_cast<uint32_t>(sequence));
  const ImageOrder order{hello.start_unix_ns(), static_cast<uint32_t>(sequence)};
  Image& image = chains[ProcessId(hello.hostname(), hello.pid())][order];
  image.ppid = hello.ppid();
  image.client = peer.ClientKey();
}

void Aggregator::Impl::ConnectionEnded(uint64_t sequence, const PeerIdentity& peer,
                                       std::unique_ptr<Session> session, bool has_data) {
  limits.ConnectionEnded(peer);
  if (!has_data) {
    // It was no earlier image: the chains of its client that waited for it go on.
    std::lock_guard lock(chains_mutex);
    if (awaiting_hello.erase(static_cast<uint32_t>(sequence)) > 0) {
      std::vector<ProcessId> waiting;
      for (const auto& [process, images] : chains) {
        for (const auto& entry : images) {
          if (entry.second.client == peer.ClientKey()) {
            waiting.push_back(process);
            break;
          }
        }
      }
      for (const ProcessId& process : waiting) ResolveChains(process, false);
    }
  }
  if (has_data) {
    const uint64_t end_unix_ns = NowUnixNs();
    // Continuous mode: its last window, compacted like the others (the exec chain folds
    // those).
    if (options.window.count() > 0) session = session->TakeWindow(end_unix_ns, /*last=*/true);
    const ProcessId process(session->hello().hostname(), session->hello().pid());
    bool waits = false;
    {
      std::lock_guard lock(chains_mutex);
      const ImageOrder order{session->hello().start_unix_ns(), static_cast<uint32_t>(sequence)};
      Image& image = chains[process][order];
      image.ppid = session->hello().ppid();
      image.client = peer.ClientKey();
      image.end_unix_ns = end_unix_ns;
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
  if (!flush && EarlierImageMayBePending(images)) return;
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

bool Aggregator::Impl::EarlierImageMayBePending(const std::map<ImageOrder, Image>& images) const {
  uint32_t newest = 0;
  for (const auto& entry : images) newest = std::max(newest, entry.first.sequence);
  for (const auto& [sequence, client] : awaiting_hello) {
    if (sequence >= newest) break;
    for (const auto& entry : images) {
      if (entry.second.client == client) return true;
    }
  }
  return false;
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
      WriteProcess(first_sequence(begin, i), chain[begin].second.client, std::move(folded),
                   chain[i - 1].second.end_unix_ns);
      begin = i;
    }
    folded = std::move(next);
  }
  WriteProcess(first_sequence(begin, chain.size()), chain[begin].second.client, std::move(folded),
               chain.back().second.end_unix_ns);
}

void Aggregator::Impl::WriteProcess(uint32_t sequence, const std::string& client,
                                    std::unique_ptr<Session> session, uint64_t end_unix_ns) {
  const wire::Hello& hello = session->hello();
  FinishedSession work = WorkFor(sequence, *session);
  if (options.window.count() > 0) {
    work.key.window_end_unix_ns = end_unix_ns;
    work.last_window = true;
    // Its last window adds nothing to those written before it.
    if (session->earlier_windows() > 0 && session->RecordedNothing()) return;
  }
  // The program (by pid once known: a process it forked can connect before it does).
  const uint32_t program = program_pid.load(std::memory_order_acquire);
  const bool is_program = program != 0 ? hello.pid() == program : sequence == 0;
  if (options.skip_empty_profiles && !is_program && session->RecordedNothing()) {
    WrittenProfile skipped;
    skipped.process = std::move(work.key);
    skipped.recorded_nothing = true;
    recorded_nothing.push_back(std::move(skipped));
    return;
  }
  if (!AllowProfile(client, work.key)) return;
  work.end_unix_ns = end_unix_ns;
  work.session = std::move(session);
  writer_turns.Add(client, std::move(work));
}

FinishedSession Aggregator::Impl::WorkFor(uint32_t sequence, const Session& session) const {
  const wire::Hello& hello = session.hello();  // the profiled process, whoever connected
  FinishedSession work;
  work.key.pid = hello.pid();
  work.key.ppid = hello.ppid();
  work.key.executable = hello.executable();
  work.key.sequence = sequence;
  for (const profile::ExecImage& image : session.exec_chain()) {
    work.key.exec_chain.push_back(image.executable());
  }
  work.key.window_start_unix_ns = session.window_start_unix_ns();
  return work;
}

bool Aggregator::Impl::AllowProfile(const std::string& client, const ProcessKey& key) {
  if (limits.AllowProfile(client, PeerLimits::Clock::now())) return true;
  profiles_over_limit.fetch_add(1, std::memory_order_relaxed);
  if (uint64_t suppressed = 0; profile_limit_limiter.Allow(&suppressed)) {
    spdlog::warn(
        "not writing the profile of pid {} ({}) from {}: that client has written {} profiles "
        "in {}, its limit (cilkprofd --max-profiles-per-minute){}",
        key.pid, key.executable, client, options.max_profiles_per_client,
        WindowText(options.limit_window),
        suppressed == 0 ? "" : fmt::format("; {} more not written since the last such message",
                                           suppressed));
  }
  return false;
}

void Aggregator::Impl::WindowTaken(const std::shared_ptr<WindowCut>& cut, uint64_t end_unix_ns,
                                   uint32_t sequence, const PeerIdentity& peer,
                                   std::unique_ptr<Session> window) {
  if (window != nullptr && !window->RecordedNothing()) {
    FinishedSession work = WorkFor(sequence, *window);
    work.key.window_end_unix_ns = work.end_unix_ns = end_unix_ns;
    if (AllowProfile(peer.ClientKey(), work.key)) {
      work.session = std::move(window);
      work.done = [cut](const WrittenProfile& written) {
        std::lock_guard lock(cut->mutex);
        cut->written.push_back(written);
        cut->changed.notify_all();
      };
      {
        std::lock_guard lock(cut->mutex);
        ++cut->submitted;
      }
      writer_turns.Add(peer.ClientKey(), std::move(work));
    }
  }
  std::lock_guard lock(cut->mutex);
  ++cut->taken;
  cut->changed.notify_all();
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

namespace {

Status ValidateOptions(const AggregatorOptions& options) {
  if ((options.unix_socket_mode & ~0666u) != 0 || (options.unix_socket_mode & 0600u) != 0600u) {
    return Status::Error(fmt::format(
        "socket mode {:o} is not allowed: use 600 (the default), 660 or 666, read and write "
        "for the owner, nothing executable",
        options.unix_socket_mode));
  }
  if (options.memory_budget_bytes == 0) {
    return Status::Error("the memory budget for buffered frames is 0 bytes; give at least one frame's worth");
  }
  if (!options.tcp_endpoint.empty() && options.tcp_secret_file.empty()) {
    return Status::Error(
        "TCP connections must be authenticated: give a shared secret file too (cilkprofd "
        "--tcp-secret-file FILE; see docs/SECURITY.md)");
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Aggregator>> Aggregator::Start(AggregatorOptions options,
                                                      SymbolSourceFactory symbols) {
  if (!symbols) return Status::Error("no symbolizer given to the aggregator");
  CILKPROF_RETURN_IF_ERROR(ValidateOptions(options));
  try {
    std::string token;
    if (!options.tcp_endpoint.empty()) {
      auto loaded = internal::LoadTcpSecret(options.tcp_secret_file);
      if (!loaded.ok()) return loaded.status();
      token = std::move(*loaded);
    }
    auto impl = std::make_unique<Impl>(std::move(options), std::move(symbols));
    impl->token = std::move(token);
    CILKPROF_RETURN_IF_ERROR(internal::ListenUnix(impl->options.unix_socket_path,
                                                  &impl->unix_listener.acceptor, &impl->socket_inode,
                                                  impl->options.unix_socket_mode));
    if (const std::string warning = internal::SharedDirectoryWarning(impl->options.unix_socket_path);
        !warning.empty()) {
      spdlog::warn("{}", warning);
    }
    if (!impl->options.tcp_endpoint.empty()) {
      if (Status status = internal::ListenTcp(impl->options.tcp_endpoint, &impl->tcp_listener.acceptor);
          !status.ok()) {
        internal::RemoveUnixSocketIfOurs(impl->options.unix_socket_path, impl->socket_inode);
        return status;
      }
      boost::system::error_code ec;
      impl->tcp_port = impl->tcp_listener.acceptor.local_endpoint(ec).port();
    }
    if (impl->options.max_frame_bytes > impl->options.memory_budget_bytes) {
      spdlog::warn("the memory budget for buffered frames ({} bytes) is smaller than the largest "
                   "frame accepted ({} bytes): larger frames will drop their connection",
                   impl->options.memory_budget_bytes, impl->options.max_frame_bytes);
    }
    Impl* raw = impl.get();
    raw->Accept(&raw->unix_listener);
    if (raw->tcp_listener.acceptor.is_open()) raw->Accept(&raw->tcp_listener);
    raw->io_thread = std::thread([raw] {
      try {
        raw->io.run();
      } catch (const std::exception& e) {
        spdlog::critical("the aggregator's I/O thread failed: {}", e.what());
      }
    });
    spdlog::info("aggregator listening on {}{}", raw->options.unix_socket_path,
                 raw->tcp_port ? fmt::format(" and TCP port {} (authenticated)", raw->tcp_port) : "");
    return std::unique_ptr<Aggregator>(new Aggregator(std::move(impl)));
  } catch (const std::exception& e) {
    return Status::Error(std::string("cannot start the aggregator: ") + e.what());
  }
}

std::vector<WrittenProfile> Aggregator::Finish(std::chrono::milliseconds drain) {
  Impl& impl = *impl_;
  {
    std::lock_guard cut_lock(impl.cut_mutex);  // waits for a CutWindow under way
    impl.finishing = true;
  }
  {
    std::lock_guard lock(impl.mutex);
    if (impl.finished) return impl.result;
  }
  // 1. Stop accepting (on the I/O thread, which owns the acceptors), once every
  // connection already made is registered.
  std::promise<void> stopped;
  asio::post(impl.io, [&impl, &stopped] {
    impl.stopping_accept = true;
    impl.listeners_stopped = &stopped;
    impl.StopAccepting(&impl.unix_listener);
    impl.StopAccepting(&impl.tcp_listener);
    if (impl.listeners_draining == 0) stopped.set_value();
  });
  stopped.get_future().wait();
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
  impl.writer_turns.WaitUntilIdle();
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

std::vector<WrittenProfile> Aggregator::CutWindow(uint64_t end_unix_ns) {
  Impl& impl = *impl_;
  std::lock_guard cut_lock(impl.cut_mutex);
  if (impl.finishing || impl.options.window.count() <= 0) return {};
  std::promise<void> accepted;
  asio::post(impl.io, [&impl, &accepted] {
    impl.AcceptBacklog(&impl.unix_listener);
    impl.AcceptBacklog(&impl.tcp_listener);
    // A connection the pending async_accept took before this ran is not in the backlog
    // any more: its handler, queued already, starts it. The cut waits for that handler
    // too (a handler queued before this post runs before it): without the wait, such a
    // connection missed the cut, its Hello and samples went to the next window.
    asio::post(impl.io, [&accepted] { accepted.set_value(); });
  });
  accepted.get_future().wait();
  std::vector<std::pair<uint32_t, std::shared_ptr<ConnectionBase>>> connections;
  {
    std::lock_guard lock(impl.mutex);
    for (auto& [sequence, weak] : impl.open) {
      if (auto connection = weak.lock()) connections.emplace_back(static_cast<uint32_t>(sequence), std::move(connection));
    }
  }
  // First, so that a session that says Hello from now on starts in the new window, and
  // one that ends before its cut runs writes the window it began in (its own start).
  impl.window_start.store(end_unix_ns);
  auto cut = std::make_shared<Impl::WindowCut>();
  cut->connections = connections.size();
  for (auto& [sequence, connection] : connections) {
    connection->CutWindow(end_unix_ns, [&impl, cut, end_unix_ns, sequence = sequence](
                                           std::unique_ptr<Session> window, const PeerIdentity& peer) {
      impl.WindowTaken(cut, end_unix_ns, sequence, peer, std::move(window));
    });
  }
  connections.clear();
  std::unique_lock lock(cut->mutex);
  cut->changed.wait(lock, [&] {
    return cut->taken == cut->connections && cut->written.size() == cut->submitted;
  });
  return cut->written;
}

uint64_t Aggregator::connections_accepted() const { return impl_->accepted.load(); }
uint64_t Aggregator::connections_dropped() const { return impl_->dropped.load(); }
uint64_t Aggregator::connections_open() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->open.size();
}
uint16_t Aggregator::tcp_port() const { return impl_->tcp_port; }

void Aggregator::SetProgramPid(uint32_t pid) { impl_->program_pid.store(pid, std::memory_order_release); }

AggregatorStats Aggregator::stats() const {
  const Impl& impl = *impl_;
  AggregatorStats s;
  s.connections_accepted = impl.accepted.load();
  s.connections_open = connections_open();
  s.connections_dropped = impl.dropped.load();
  s.refused_peer_uid = impl.refused_uid.load();
  s.refused_connection_limit = impl.refused_limit.load();
  s.refused_tcp_rate = impl.refused_rate.load();
  s.refused_authentication = impl.refused_authentication.load();
  s.profiles_over_limit = impl.profiles_over_limit.load();
  s.profiles_written = impl.writer.written_count();
  s.profiles_failed = impl.writer.failed_count();
  s.buffered_frame_bytes = impl.budget.reserved();
  s.peak_buffered_frame_bytes = impl.budget.peak();
  s.memory_budget_bytes = impl.budget.capacity();
  s.memory_waits = impl.budget.waits();
  s.waiting_for_memory = impl.budget.waiting();
  return s;
}

}  // namespace cilkprof::aggregator
