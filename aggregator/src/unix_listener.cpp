// Listening sockets of the aggregator (see listeners.h).
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "listeners.h"

namespace cilkprof::aggregator::internal {
namespace asio = boost::asio;
using local_stream = asio::local::stream_protocol;

namespace {

constexpr size_t kMaxUnixPath = sizeof(sockaddr_un{}.sun_path) - 1;

// True when something accepts connections on the socket at `path`.
bool SocketIsLive(const std::string& path) {
  asio::io_context io;
  local_stream::socket probe(io);
  boost::system::error_code ec;
  probe.connect(local_stream::endpoint(path), ec);
  return !ec;
}

std::string TemporaryNameBeside(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  return fmt::format("{}.cilkprof-sock-{}-{}", dir, ::getpid(), counter++);
}

Status BindListen(local_stream::acceptor* acceptor, const std::string& bind_path,
                  const std::string& shown_path, mode_t mode) {
  boost::system::error_code ec;
  acceptor->open(local_stream(), ec);
  if (!ec) acceptor->bind(local_stream::endpoint(bind_path), ec);
  if (ec) {
    return Status::Error(fmt::format(
        "cannot create the socket {} ({}); check that its directory exists and is writable",
        shown_path, ec.message()));
  }
  if (::chmod(bind_path.c_str(), mode) != 0) {
    const int err = errno;
    ::unlink(bind_path.c_str());
    return Status::Error(fmt::format("cannot set the permissions of the socket {} to {:o} ({})",
                                     shown_path, mode, std::strerror(err)));
  }
  acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    ::unlink(bind_path.c_str());
    return Status::Error(fmt::format("cannot listen on {} ({})", shown_path, ec.message()));
  }
  return Status::Ok();
}

}  // namespace

Status ListenUnix(const std::string& path, local_stream::acceptor* acceptor, ino_t* inode,
                  mode_t mode) {
  if (path.empty()) {
    return Status::Error("no Unix socket path given; pass the path the agents connect to");
  }
  if (path.size() > kMaxUnixPath) {
    return Status::Error(fmt::format(
        "the socket path {} is {} bytes long; Unix sockets allow at most {}; choose a shorter path",
        path, path.size(), kMaxUnixPath));
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return Status::Error(fmt::format(
          "{} exists and is not a socket; remove it or choose another socket path", path));
    }
    if (SocketIsLive(path)) {
      return Status::Error(fmt::format(
          "another aggregator (cilkprofd or cilkprof-run) is already listening on {}; stop it or "
          "choose another socket path",
          path));
    }
    ::unlink(path.c_str());  // stale: its aggregator died without cleaning up
  }
  const std::string temporary = TemporaryNameBeside(path);
  if (temporary.size() <= kMaxUnixPath) {
    CILKPROF_RETURN_IF_ERROR(BindListen(acceptor, temporary, path, mode));
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
      const int err = errno;
      ::unlink(temporary.c_str());
      return Status::Error(
          fmt::format("cannot move the socket into place at {} ({})", path, std::strerror(err)));
    }
  } else {
    // No room for a temporary name: bind in place. Until listen() nobody can connect,
    // so the brief default permissions admit no one.
    CILKPROF_RETURN_IF_ERROR(BindListen(acceptor, path, path, mode));
  }
  *inode = ::lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
  return Status::Ok();
}

std::string SharedDirectoryWarning(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return "";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) == 0 || (st.st_mode & S_ISVTX) != 0) return "";
  return fmt::format(
      "the directory {} of the socket is writable by other users (mode {:o}, no sticky bit): "
      "they could replace the socket and receive your agents' profiles; prefer a directory only "
      "you can write to (the default, see docs/SECURITY.md)",
      dir, st.st_mode & 07777);
}

void RemoveUnixSocketIfOurs(const std::string& path, ino_t inode) {
  struct stat st {};
  if (inode != 0 && ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == inode) {
    ::unlink(path.c_str());
  }
}

Status ListenTcp(const std::string& endpoint, asio::ip::tcp::acceptor* acceptor) {
  const size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon + 1 == endpoint.size()) {
    return Status::Error(fmt::format(
        "TCP endpoint \"{}\" has no port; write HOST:PORT, e.g. 127.0.0.1:7070 or [::1]:7070",
        endpoint));
  }
  std::string host = endpoint.substr(0, colon);
  const std::string port = endpoint.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";
  asio::io_context io;
  asio::ip::tcp::resolver resolver(io);
  boost::system::error_code ec;
  auto results = resolver.resolve(host, port, asio::ip::tcp::resolver::passive |
                                                  asio::ip::tcp::resolver::numeric_service, ec);
  if (ec || results.empty()) {
    return Status::Error(fmt::format("cannot resolve TCP endpoint \"{}\" ({}); check host and port",
                                     endpoint, ec ? ec.message() : "no address"));
  }
  const asio::ip::tcp::endpoint where = results.begin()->endpoint();
  acceptor->open(where.protocol(), ec);
  if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(where, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::Error(fmt::format("cannot listen on TCP {} ({}); is the port in use?", endpoint,
                                     ec.message()));
  }
  return Status::Ok();
}

}  // namespace cilkprof::aggregator::internal
