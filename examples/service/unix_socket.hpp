// Unix stream sockets for the example service and its load generator: where the
// socket lives by default, listening (with a stale socket file replaced but a live
// service left alone), connecting, and whole-line I/O that survives EINTR (the
// profiler's sampling signals interrupt system calls of a profiled service).
#pragma once

#include <string>

namespace cilk_service {

// $XDG_RUNTIME_DIR/cilk-service.sock, or /tmp/cilk-service-<uid>.sock without it.
std::string default_socket_path();

// Binds and listens at `path` (socket file mode 0600: the service answers its own
// user only). A socket file nobody listens on is replaced; a live one, or a file
// that is not a socket, is an error. Returns the descriptor, or -1 with *error set.
int listen_unix(const std::string& path, std::string* error);

// Connects to `path`; returns the descriptor, or -1 with *error set.
int connect_unix(const std::string& path, std::string* error);

// Writes all of data (MSG_NOSIGNAL: a client gone is an error, not SIGPIPE).
bool send_all(int fd, const std::string& data);

// Buffers a stream and hands out whole lines (without '\n').
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // Reads until a full line is buffered. Returns false at EOF or on error; a line
  // longer than max_bytes is an error too.
  bool read_line(std::string* line, std::size_t max_bytes);
  // Reads what is available now (one read(2) call; the socket said it is readable).
  // Returns false at EOF or on error.
  bool fill_once();
  // Takes the next buffered full line, if any.
  bool take_line(std::string* line);
  std::size_t buffered() const { return buffer_.size(); }

 private:
  int fd_;
  std::string buffer_;
};

}  // namespace cilk_service
