// One agent connection of the aggregator (internal to the server): authenticates a TCP
// client, reads frames within the memory budget, decodes and merges them into a
// Session, and hands the session to its owner when the connection ends.
//
// Reading is fair and bounded:
//   - The connection waits for readability without a buffer of its own, then reads
//     into the I/O thread's buffer with non-blocking reads. After a turn of
//     kTurnBytes it goes to the back of the I/O thread's queue, so a client that
//     floods cannot delay the others by more than one turn each.
//   - It reads a frame's header, then reserves the whole frame in the MemoryBudget
//     before reading its payload. A frame larger than the whole budget is refused; one
//     that does not fit now waits, unread (backpressure), first come first served.
//   - A connection that holds memory for a frame it stopped sending (for the stall
//     timeout, while others wait for memory) is dropped, and so is a TCP client that
//     does not authenticate within it.
// Frames are fed to the FrameDecoder exactly as the FrameMeter delimits them, so the
// decoder never holds more than the frame that was reserved.
#pragma once

#include <spdlog/spdlog.h>

#include <array>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "cilkprof/aggregator/framing.h"
#include "cilkprof/aggregator/session.h"
#include "frame_meter.h"
#include "log_limiter.h"
#include "memory_budget.h"
#include "peer_limits.h"
#include "tcp_auth.h"

namespace cilkprof::aggregator::internal {

class ConnectionBase {
 public:
  virtual ~ConnectionBase() = default;
  // Ends the connection from outside (shutdown): what the agent sent is merged, then
  // its data is written as "connection lost". Thread-safe.
  virtual void Close() = 0;
  // Continuous mode (server.h, "Windows"): on the connection's strand, merges what the
  // agent has sent so far (what the socket holds, without waiting), then ends the
  // session's window at `end_unix_ns` and calls `take` with it; with nullptr when there
  // is no window to take (no Hello yet, or the connection ended). `take` is called
  // exactly once, on the strand.
  using TakeWindow = std::function<void(std::unique_ptr<Session>, const PeerIdentity&)>;
  virtual void CutWindow(uint64_t end_unix_ns, TakeWindow take) = 0;
};

// What a connection needs from the server.
class ConnectionOwner {
 public:
  virtual size_t max_frame_bytes() const = 0;
  virtual MemoryBudget& memory_budget() = 0;
  // 0: never drop a stalled connection.
  virtual std::chrono::milliseconds stall_timeout() const = 0;
  // Continuous mode: the start of the current window (ns since the Unix epoch), given
  // to each session when its Hello arrives; 0: not windowed.
  virtual uint64_t window_start_unix_ns() const = 0;
  // The token TCP clients must present (NormalizeToken'ed).
  virtual const std::string& tcp_token() const = 0;
  virtual void CountDropped() = 0;
  virtual void CountRefusedAuthentication() = 0;
  // Limit the per-connection warnings (drops, read errors, refusals) and the lines
  // that say who connected, so that a flood of connections cannot flood the log.
  virtual LogLimiter& warning_limiter() = 0;
  virtual LogLimiter& hello_limiter() = 0;
  // Called on the connection's strand when its Hello has been merged.
  virtual void HelloArrived(uint64_t sequence, const PeerIdentity& peer, const wire::Hello& hello) = 0;
  // Called once per connection, on its strand, when it ends.
  virtual void ConnectionEnded(uint64_t sequence, const PeerIdentity& peer,
                               std::unique_ptr<Session> session, bool has_data) = 0;

 protected:
  ~ConnectionOwner() = default;
};

inline std::string SuppressedNote(uint64_t n) {
  return n == 0 ? std::string() : fmt::format(" ({} similar warnings suppressed)", n);
}

template <class Socket>
class Connection final : public ConnectionBase,
                         public std::enable_shared_from_this<Connection<Socket>> {
 public:
  static constexpr size_t kChunkBytes = 64 * 1024;       // one read
  static constexpr uint64_t kTurnBytes = 256 * 1024;     // then the next connection's turn
  static constexpr uint64_t kShrinkAfterBytes = 64 * 1024;  // frames whose buffer is given back

  // `authenticate`: a TCP client, which must first present the owner's tcp_token().
  Connection(ConnectionOwner* owner, Socket socket, uint32_t sequence, PeerIdentity peer,
             bool authenticate)
      : owner_(owner),
        socket_(std::move(socket)),
        sequence_(sequence),
        peer_(std::move(peer)),
        decoder_(owner->max_frame_bytes()),
        session_(std::make_unique<Session>()),
        stall_timer_(socket_.get_executor()),
        authenticating_(authenticate) {}

  // A connection always ends through End(); this only guards against a handler chain
  // lost some other way, so that Finish() never waits for it forever.
  ~Connection() override {
    if (reserved_ > 0) owner_->memory_budget().Release(reserved_);
    if (!ended_ && session_) {
      ended_ = true;
      const bool has_data = session_->has_hello();
      owner_->ConnectionEnded(sequence_, peer_, std::move(session_), has_data);
    }
  }

  // Starts reading, on the connection's strand.
  void Start() {
    boost::asio::dispatch(socket_.get_executor(), [self = this->shared_from_this()] {
      boost::system::error_code ignored;
      self->socket_.non_blocking(true, ignored);
      if (self->authenticating_) self->ArmStallTimer();
      self->ReadTurn();
    });
  }

  // At shutdown, the bytes the agent already sent are merged first: they sit in the
  // socket's receive buffer and would otherwise be lost. A connection that has not
  // ended always has a readiness wait pending, or its next turn queued, or a request
  // for memory queued: the wait is cancelled (its handler sees closing_), a queued
  // turn sees closing_, a memory request is withdrawn here.
  void Close() override {
    boost::asio::dispatch(socket_.get_executor(), [self = this->shared_from_this()] {
      if (self->ended_) return;
      self->closing_ = true;
      if (self->memory_ticket_ != 0) {
        // Granted already: OnMemoryGranted is on its way and sees closing_.
        if (!self->owner_->memory_budget().Cancel(self->memory_ticket_)) return;
        self->memory_ticket_ = 0;
        self->MergeBufferedThenEnd();
        return;
      }
      boost::system::error_code ignored;
      self->socket_.cancel(ignored);
    });
  }

  void CutWindow(uint64_t end_unix_ns, TakeWindow take) override {
    boost::asio::dispatch(socket_.get_executor(), [self = this->shared_from_this(), end_unix_ns,
                                                   take = std::move(take)] {
      self->MergeAvailable();
      if (self->ended_ || self->closing_ || !self->session_->has_hello()) {
        take(nullptr, self->peer_);
        return;
      }
      take(self->session_->TakeWindow(end_unix_ns, /*last=*/false), self->peer_);
    });
  }

 private:
  enum class Step { kProgress, kWouldBlock, kWaitingForMemory, kEndOfStream, kEnded };

  static char* ReadBuffer() {
    thread_local std::array<char, kChunkBytes> buffer;
    return buffer.data();
  }

  // Reads for one turn, then yields to the other connections.
  void ReadTurn() {
    if (ended_) return;
    if (closing_) {
      MergeBufferedThenEnd();
      return;
    }
    uint64_t quota = kTurnBytes;
    while (true) {
      switch (ReadStep(&quota, Reserve::kWait)) {
        case Step::kProgress:
          if (quota > 0) continue;
          // Not waiting for readability: bytes are left, and the reactor is edge
          // triggered, so only a read that came back empty may be followed by a wait.
          boost::asio::post(socket_.get_executor(),
                            [self = this->shared_from_this()] { self->ReadTurn(); });
          return;
        case Step::kWouldBlock:
          socket_.async_wait(Socket::wait_read,
                             [self = this->shared_from_this()](boost::system::error_code ec) {
                               self->OnReadable(ec);
                             });
          return;
        case Step::kEndOfStream:
          OnEndOfStream();
          return;
        case Step::kWaitingForMemory:
        case Step::kEnded:
          return;
      }
    }
  }

  void OnReadable(boost::system::error_code ec) {
    if (ended_) return;
    if (closing_) {
      MergeBufferedThenEnd();
    } else if (ec == boost::asio::error::operation_aborted) {
      End();
    } else if (ec) {
      ReadError(ec);
    } else {
      ReadTurn();
    }
  }

  // How a read gets the memory for a frame: waits for it (the usual reads); takes it if
  // free, else stops reading for now (a window cut); takes it if free, else ends the
  // connection (shutdown).
  enum class Reserve { kWait, kIfFree, kOrEnd };

  // One read: the authentication line, a frame header, or (memory reserved) payload.
  Step ReadStep(uint64_t* quota, Reserve reserve) {
    if (authenticating_) return AuthenticationStep();
    if (meter_.header_complete() && reserved_ == 0 && !ReserveFrame(reserve)) {
      return ended_ ? Step::kEnded : Step::kWaitingForMemory;
    }
    const size_t want = static_cast<size_t>(std::min<uint64_t>(meter_.bytes_to_boundary(), kChunkBytes));
    boost::system::error_code ec;
    const size_t n = socket_.read_some(boost::asio::buffer(ReadBuffer(), want), ec);
    if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) {
      return Step::kWouldBlock;
    }
    if (ec == boost::asio::error::interrupted) return Step::kProgress;
    if (ec == boost::asio::error::eof) return Step::kEndOfStream;
    if (ec) {
      ReadError(ec);
      return Step::kEnded;
    }
    progress_ += n;
    *quota -= std::min<uint64_t>(n, *quota);
    const std::string_view bytes(ReadBuffer(), n);
    const uint64_t frame_bytes = meter_.frame_bytes();
    const bool frame_complete = meter_.Advance(bytes);
    if (!Consume(bytes)) return Step::kEnded;  // dropped
    if (frame_complete) FrameMerged(frame_bytes);
    return Step::kProgress;
  }

  // Reserves the frame whose header was just read. False if it has to wait (then
  // OnMemoryGranted resumes) or the connection ended (dropped, or shutting down with
  // no memory to spare).
  bool ReserveFrame(Reserve reserve) {
    const uint64_t bytes = meter_.frame_bytes();
    MemoryBudget& budget = owner_->memory_budget();
    if (bytes > budget.capacity()) {
      Drop(fmt::format(
          "a frame of {} bytes is larger than the whole memory budget for buffered frames "
          "({} bytes; cilkprofd --memory-budget)",
          bytes, budget.capacity()));
      return false;
    }
    if (reserve != Reserve::kWait) {
      if (budget.TryReserve(bytes)) {
        reserved_ = bytes;
        ArmStallTimer();
        return true;
      }
      if (reserve == Reserve::kIfFree) return false;
      Warn(fmt::format(
          "shutting down with the memory budget in use: the last frame ({} bytes) is not read",
          bytes));
      End();
      return false;
    }
    const uint64_t ticket = budget.ReserveOrWait(bytes, [self = this->shared_from_this(), bytes] {
      boost::asio::post(self->socket_.get_executor(), [self, bytes] { self->OnMemoryGranted(bytes); });
    });
    if (ticket != 0) {
      memory_ticket_ = ticket;
      return false;
    }
    reserved_ = bytes;
    ArmStallTimer();
    return true;
  }

  void OnMemoryGranted(uint64_t bytes) {
    memory_ticket_ = 0;
    if (ended_) {
      owner_->memory_budget().Release(bytes);
      return;
    }
    reserved_ = bytes;
    ArmStallTimer();
    ReadTurn();  // or, when closing_, merges what is there
  }

  void FrameMerged(uint64_t frame_bytes) {
    owner_->memory_budget().Release(reserved_);
    reserved_ = 0;
    if (frame_bytes > kShrinkAfterBytes) GiveBackDecoderBuffer();
  }

  // The decoder's buffer keeps the capacity of the largest frame it held, outside the
  // budget. After a large frame it is empty (an empty Feed drops the consumed bytes),
  // and a copy of the decoder allocates only what it holds: the same decoder state in
  // a small buffer.
  void GiveBackDecoderBuffer() {
    decoder_.Feed(std::string_view());
    FrameDecoder compact(decoder_);
    decoder_ = std::move(compact);
  }

  // Peeks at the authentication line and consumes exactly its bytes, so that the first
  // frame stays in the socket for the frame reads (and the memory budget).
  Step AuthenticationStep() {
    char* buffer = ReadBuffer();
    boost::system::error_code ec;
    const size_t n = socket_.receive(boost::asio::buffer(buffer, kMaxAuthLineBytes + 1),
                                     Socket::message_peek, ec);
    if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) {
      return Step::kWouldBlock;
    }
    if (ec == boost::asio::error::interrupted) return Step::kProgress;
    if (ec == boost::asio::error::eof) {
      RefuseAuthentication("it closed the connection before authenticating");
      return Step::kEnded;
    }
    if (ec) {
      ReadError(ec);
      return Step::kEnded;
    }
    const size_t take = preamble_.Offer(std::string_view(buffer, n));
    socket_.read_some(boost::asio::buffer(buffer, take), ec);  // peeked: there already
    progress_ += take;
    if (!preamble_.done()) return Step::kProgress;
    if (Status verified = preamble_.Verify(owner_->tcp_token()); !verified.ok()) {
      RefuseAuthentication(verified.message());
      return Step::kEnded;
    }
    authenticating_ = false;
    return Step::kProgress;
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
        if (uint64_t suppressed = 0; owner_->hello_limiter().Allow(&suppressed)) {
          // `cilkprof attach` connects with its own credentials and hands the connection
          // to the process: the Hello says who is profiled, the peer who connected.
          const bool handed_over = peer_.is_unix && peer_.has_credentials &&
                                   static_cast<uint32_t>(peer_.pid) != hello.pid();
          spdlog::info("connection #{} ({}): pid {} ({}) connected{}, clock {}, period {} ns{}",
                       sequence_, peer_.Describe(), hello.pid(), hello.executable(),
                       handed_over ? fmt::format(" through a connection pid {} made", peer_.pid) : "",
                       hello.clock(), hello.period_ns(),
                       suppressed == 0 ? "" : fmt::format(" ({} such lines suppressed)", suppressed));
        }
        if (const uint64_t window = owner_->window_start_unix_ns(); window != 0) {
          session_->set_window_start(window);
        }
        owner_->HelloArrived(sequence_, peer_, hello);
      }
    }
    if (!decoder_.status().ok()) {
      Drop(decoder_.status().message());
      return false;
    }
    return true;
  }

  void OnEndOfStream() {
    if (authenticating_) {
      RefuseAuthentication("it closed the connection before authenticating");
    } else if (Status truncated = decoder_.Finish(); !truncated.ok()) {
      Drop(truncated.message());
    } else {
      End();
    }
  }

  // Shutdown: merge what the agent has sent, without waiting for more (or for memory).
  void MergeBufferedThenEnd() {
    uint64_t unlimited = std::numeric_limits<uint64_t>::max();
    while (true) {
      switch (ReadStep(&unlimited, Reserve::kOrEnd)) {
        case Step::kProgress:
          continue;
        case Step::kEndOfStream:
          OnEndOfStream();
          return;
        case Step::kWouldBlock:
          End();
          return;
        case Step::kWaitingForMemory:  // not with Reserve::kOrEnd
        case Step::kEnded:
          return;
      }
    }
  }

  // A window cut: merges the frames the socket holds now, without waiting for more or
  // for memory. The connection's own reads go on as before: a pending readiness wait
  // fires on the next data (this read until the socket was empty, or stopped at a
  // frame that needs memory, which a queued turn or a later wait reads), and end of
  // stream is left for them to see.
  void MergeAvailable() {
    if (ended_ || closing_ || authenticating_ || memory_ticket_ != 0) return;
    uint64_t unlimited = std::numeric_limits<uint64_t>::max();
    while (ReadStep(&unlimited, Reserve::kIfFree) == Step::kProgress && !ended_) {
    }
  }

  // Watches a connection that holds memory for a frame, or has yet to authenticate.
  void ArmStallTimer() {
    if (timer_armed_ || owner_->stall_timeout().count() <= 0) return;
    timer_armed_ = true;
    progress_at_arm_ = progress_;
    stall_timer_.expires_after(owner_->stall_timeout());
    stall_timer_.async_wait([self = this->shared_from_this()](boost::system::error_code ec) {
      self->OnStallTimer(ec);
    });
  }

  void OnStallTimer(boost::system::error_code ec) {
    timer_armed_ = false;
    if (ec || ended_ || closing_) return;
    if (!authenticating_ && reserved_ == 0) return;  // nothing held: nothing to watch
    if (progress_ != progress_at_arm_) {
      ArmStallTimer();
      return;
    }
    const auto ms = owner_->stall_timeout().count();
    if (authenticating_) {
      RefuseAuthentication(fmt::format("it sent no complete authentication line in {} ms", ms));
      return;
    }
    // Memory nobody else needs yet may stay held: an agent stopped mid-frame (Ctrl-Z)
    // can continue.
    if (owner_->memory_budget().waiting() == 0) {
      ArmStallTimer();
      return;
    }
    Drop(fmt::format(
        "it sent {} of the {} bytes of a frame, then nothing for {} ms, while other connections "
        "wait for the memory the frame holds",
        meter_.frame_bytes_seen(), meter_.frame_bytes(), ms));
  }

  std::string Who() const {
    std::string who = " (" + peer_.Describe();
    if (session_ && session_->has_hello()) {
      who += ", says pid " + std::to_string(session_->hello().pid());
    }
    return who + ")";
  }

  void Warn(const std::string& what) {
    if (uint64_t suppressed = 0; owner_->warning_limiter().Allow(&suppressed)) {
      spdlog::warn("connection #{}{}: {}{}", sequence_, Who(), what, SuppressedNote(suppressed));
    }
  }

  void ReadError(boost::system::error_code ec) {
    Warn(fmt::format("read error ({}); keeping the data received", ec.message()));
    End();
  }

  void RefuseAuthentication(const std::string& reason) {
    if (uint64_t suppressed = 0; owner_->warning_limiter().Allow(&suppressed)) {
      spdlog::warn("refused TCP connection #{} from {}: {}{}", sequence_, peer_.Describe(), reason,
                   SuppressedNote(suppressed));
    }
    owner_->CountRefusedAuthentication();
    End();
  }

  void Drop(const std::string& reason) {
    if (uint64_t suppressed = 0; owner_->warning_limiter().Allow(&suppressed)) {
      spdlog::warn("dropping connection #{}{}: {}{}{}", sequence_, Who(), reason,
                   session_->has_hello() ? "; keeping the data merged before" : "",
                   SuppressedNote(suppressed));
    }
    owner_->CountDropped();
    session_->MarkDropped(reason);
    End();
  }

  void End() {
    if (ended_) return;
    ended_ = true;
    boost::system::error_code ignored;
    socket_.close(ignored);
    stall_timer_.cancel();
    if (reserved_ > 0) owner_->memory_budget().Release(reserved_);
    reserved_ = 0;
    if (memory_ticket_ != 0 && owner_->memory_budget().Cancel(memory_ticket_)) memory_ticket_ = 0;
    const bool has_data = session_->has_hello();
    owner_->ConnectionEnded(sequence_, peer_, std::move(session_), has_data);
  }

  ConnectionOwner* owner_;
  Socket socket_;
  const uint32_t sequence_;
  const PeerIdentity peer_;
  FrameDecoder decoder_;
  FrameMeter meter_;
  std::unique_ptr<Session> session_;
  boost::asio::steady_timer stall_timer_;
  AuthPreamble preamble_;
  bool authenticating_;
  uint64_t reserved_ = 0;       // memory held for the frame being read
  uint64_t memory_ticket_ = 0;  // a queued request for memory
  uint64_t progress_ = 0;       // bytes read, for the stall timer
  uint64_t progress_at_arm_ = 0;
  bool timer_armed_ = false;
  bool closing_ = false;
  bool ended_ = false;
};

}  // namespace cilkprof::aggregator::internal
