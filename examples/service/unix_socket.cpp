#include "service/unix_socket.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/example_support.hpp"

namespace cilk_service {
namespace {

bool make_address(const std::string& path, sockaddr_un* address, std::string* error) {
  std::memset(address, 0, sizeof *address);
  address->sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof address->sun_path) {
    *error = cilk_examples::format("socket path '%s' is empty or longer than %zu bytes; choose a shorter --socket",
                                   path.c_str(), sizeof address->sun_path - 1);
    return false;
  }
  std::memcpy(address->sun_path, path.c_str(), path.size());
  return true;
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

std::string default_socket_path() {
  const char* runtime_dir = std::getenv("XDG_RUNTIME_DIR");
  if (runtime_dir != nullptr && runtime_dir[0] == '/') return std::string(runtime_dir) + "/cilk-service.sock";
  return cilk_examples::format("/tmp/cilk-service-%u.sock", static_cast<unsigned>(getuid()));
}

int connect_unix(const std::string& path, std::string* error) {
  sockaddr_un address;
  if (!make_address(path, &address, error)) return -1;
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = "socket: " + errno_text();
    return -1;
  }
  int rc;
  do rc = connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    *error = cilk_examples::format("cannot connect to %s: %s", path.c_str(), std::strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

int listen_unix(const std::string& path, std::string* error) {
  sockaddr_un address;
  if (!make_address(path, &address, error)) return -1;
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      *error = path + " exists and is not a socket; remove it or choose another --socket";
      return -1;
    }
    std::string ignored;
    const int live = connect_unix(path, &ignored);
    if (live >= 0) {
      close(live);
      *error = "another service is listening at " + path + "; stop it or choose another --socket";
      return -1;
    }
    unlink(path.c_str());  // stale: left by a service that was killed
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = "socket: " + errno_text();
    return -1;
  }
  // Created 0600 from the start (no window in which others could connect).
  const mode_t old_mask = umask(0177);
  const int bound = bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  const int bind_errno = errno;
  umask(old_mask);
  if (bound != 0) {
    *error = cilk_examples::format("cannot bind %s: %s", path.c_str(), std::strerror(bind_errno));
    close(fd);
    return -1;
  }
  if (listen(fd, 64) != 0) {
    *error = cilk_examples::format("cannot listen on %s: %s", path.c_str(), std::strerror(errno));
    close(fd);
    unlink(path.c_str());
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool LineReader::fill_once() {
  char chunk[4096];
  ssize_t n;
  do n = read(fd_, chunk, sizeof chunk);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  buffer_.append(chunk, static_cast<std::size_t>(n));
  return true;
}

bool LineReader::take_line(std::string* line) {
  const std::size_t end = buffer_.find('\n');
  if (end == std::string::npos) return false;
  line->assign(buffer_, 0, end);
  buffer_.erase(0, end + 1);
  return true;
}

bool LineReader::read_line(std::string* line, std::size_t max_bytes) {
  while (!take_line(line)) {
    if (buffer_.size() > max_bytes || !fill_once()) return false;
  }
  return true;
}

}  // namespace cilk_service
