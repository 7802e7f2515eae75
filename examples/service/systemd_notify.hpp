// sd_notify(3) without libsystemd: one datagram to $NOTIFY_SOCKET, so that a
// Type=notify unit (deploy/cilk-service.service) is "started" once the service
// listens and "stopping" as soon as it begins to. Outside systemd: nothing.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace cilk_service {

inline void notify_systemd(const char* state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || (path[0] != '/' && path[0] != '@')) return;
  sockaddr_un address;
  std::memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  const std::size_t len = std::strlen(path);
  if (len >= sizeof address.sun_path) return;
  std::memcpy(address.sun_path, path, len);
  if (address.sun_path[0] == '@') address.sun_path[0] = '\0';  // abstract namespace
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sendto(fd, state, std::strlen(state), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&address),
         static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len));
  close(fd);
}

}  // namespace cilk_service
