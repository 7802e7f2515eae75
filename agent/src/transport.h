// The agent's side of the connection to the aggregator, and the spill file.
//
// Frames are queued in memory and written with non-blocking sends, so a slow or
// stuck aggregator never blocks the program. The queue is bounded (kMaxQueuedBytes).
// When the aggregator cannot be reached, closes the connection, stops reading long
// enough for the queue to fill, or the program closes our socket behind our back, the
// transport switches for good to the spill file <spill_dir>/cilkprof-<pid>.spill (or
// cilkprof-<pid>.N.spill if that exists: an exec'd image has the same pid): the
// Hello first, then every frame the aggregator has not received in full, in the same
// framing, so `cilkprof import FILE` can read it. One line on stderr says where.
//
// Not signal-safe and not thread-safe: used under the flusher's lock.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>

namespace cilkprof::agent {

class Transport {
 public:
  static constexpr size_t kMaxQueuedBytes = 64u << 20;

  // Remembers where to connect and where to spill. Connecting happens in EnsureOpen().
  void Configure(std::string address, std::string spill_dir, pid_t pid);
  // Connects on first use (a bounded, blocking connect of at most 2 s), or starts
  // spilling if that fails. Idempotent.
  void EnsureOpen();
  // The first frame of the connection (and of a spill file).
  void EnqueueHello(std::string frame);
  void Enqueue(std::string frame);
  // Writes what the socket takes now, without blocking.
  void Pump();
  // Waits at most timeout_ms for the queue to drain, then spills what is left.
  void Drain(int timeout_ms);
  // Closes the socket and the spill file (after Drain).
  void Close();
  // In a fork child: forgets the parent's socket and spill file without writing to
  // them (the parent still owns that connection).
  void Abandon();
  // Frames that declare every load module and node announced so far, written after
  // the Hello when a spill file starts after the aggregator already received data
  // frames: the file must stand alone for `cilkprof import`. Called under the same
  // lock as every other use of the transport.
  void SetRedeclaration(std::function<std::string()> build) { redeclaration_ = std::move(build); }

  int socket_fd() const { return fd_; }
  bool has_pending() const { return !queue_.empty() && !spilling_; }
  bool spilling() const { return spilling_; }
  const std::string& spill_path() const { return spill_path_; }

 private:
  bool Connect(std::string* why);
  bool SocketStillOurs() const;
  void StartSpill(const std::string& why);
  void WriteToSpill(const std::string& bytes, size_t from);

  std::string address_, spill_dir_, spill_path_;
  pid_t pid_ = 0;
  bool opened_ = false;
  bool spilling_ = false;
  bool spill_failed_ = false;
  int fd_ = -1;
  dev_t fd_dev_ = 0;
  ino_t fd_ino_ = 0;
  int spill_fd_ = -1;
  std::string hello_;
  bool delivered_data_ = false;  // a frame other than the Hello reached the aggregator in full
  std::function<std::string()> redeclaration_;
  struct Pending {
    std::string bytes;
    bool is_hello;
  };
  std::deque<Pending> queue_;
  size_t front_offset_ = 0;  // bytes of queue_.front() already sent
  size_t queued_bytes_ = 0;
};

}  // namespace cilkprof::agent
