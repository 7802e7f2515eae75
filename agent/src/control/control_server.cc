#include "control/control_server.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "adopted_threads.h"
#include "cilkprof/common/control_protocol.h"
#include "log.h"
#include "real_functions.h"
#include "standby.h"

namespace cilkprof::agent {
namespace {

constexpr int kRequestTimeoutMs = 5000;

int g_listen_fd = -1;
int g_wake_fd = -1;
pid_t g_owner_pid = 0;
// Plain storage, no destructor: the exit path reads it after static destructors ran.
char g_socket_path[sizeof(sockaddr_un::sun_path)] = {};
dev_t g_socket_dev = 0;
ino_t g_socket_ino = 0;

// Like the transport's descriptors: high, away from the numbers a program assumes free.
int MoveHigh(int fd) {
  const int high = fcntl(fd, F_DUPFD_CLOEXEC, 512);
  if (high < 0) return fd;
  close(fd);
  return high;
}

bool PrepareDirectory(const std::string& dir, std::string* why) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *why = "cannot create " + dir + ": " + ErrnoText(errno);
    return false;
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    *why = "cannot read " + dir + ": " + ErrnoText(errno);
    return false;
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 07777) != 0700) {
    *why = dir + " must be a directory of uid " + std::to_string(geteuid()) +
           " with mode 0700 (it is not: someone else may have made it to take over the "
           "control socket); remove it and start the program again";
    return false;
  }
  return true;
}

bool Listen(std::string* why) {
  const uid_t uid = geteuid();
  const pid_t pid = getpid();
  const std::string dir = control::SocketDirectory(uid);
  if (!PrepareDirectory(dir, why)) return false;
  const std::string path = control::SocketPath(uid, pid);
  const std::string temporary = dir + "/.agent-" + std::to_string(pid) + ".new";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path || temporary.size() >= sizeof addr.sun_path) {
    *why = "the control socket path " + path + " is too long";
    return false;
  }
  std::memcpy(addr.sun_path, temporary.c_str(), temporary.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *why = "socket: " + ErrnoText(errno);
    return false;
  }
  unlink(temporary.c_str());
  // Bound under a temporary name, made owner-only, then renamed: the socket never
  // exists at its real name with other permissions. An older file of that name is a
  // dead process's with our pid, in our own directory: replaced.
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || chmod(temporary.c_str(), 0600) != 0 ||
      listen(fd, 8) != 0 || rename(temporary.c_str(), path.c_str()) != 0) {
    *why = "cannot listen on " + path + ": " + ErrnoText(errno);
    unlink(temporary.c_str());
    close(fd);
    return false;
  }
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    g_socket_dev = st.st_dev;
    g_socket_ino = st.st_ino;
  }
  g_listen_fd = MoveHigh(fd);
  std::memcpy(g_socket_path, path.c_str(), path.size() + 1);
  g_owner_pid = pid;
  return true;
}

void Reply(int fd, const std::string& line) {
  const std::string text = line + "\n";
  (void)!send(fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

int64_t MonotonicMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// One request line and the descriptor passed with it (-1 if none), within the timeout.
bool ReadRequest(int fd, std::string* line, int* passed_fd) {
  *passed_fd = -1;
  const int64_t deadline = MonotonicMs() + kRequestTimeoutMs;
  while (line->find('\n') == std::string::npos && line->size() < control::kMaxLineBytes) {
    const int64_t left = deadline - MonotonicMs();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) {
      if (errno == EINTR) continue;
      return false;
    }
    char buf[256];
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
    iovec iov{buf, sizeof buf};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int received;
        std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof received);
        if (*passed_fd < 0) {
          *passed_fd = received;
        } else {
          close(received);  // one connection per request: extras are not kept
        }
      }
    }
    if (n <= 0) return false;
    line->append(buf, static_cast<size_t>(n));
  }
  const size_t newline = line->find('\n');
  if (newline == std::string::npos) return false;
  line->resize(newline + 1);
  return true;
}

bool PeerAllowed(int fd, std::string* why) {
  ucred peer{};
  socklen_t len = sizeof peer;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
    *why = "cannot read the peer's credentials: " + ErrnoText(errno);
    return false;
  }
  if (peer.uid == 0 || peer.uid == geteuid()) return true;
  *why = "permission denied: uid " + std::to_string(peer.uid) + " may not profile this process of uid " +
         std::to_string(geteuid()) + " (run cilkprof attach as that user or as root)";
  return false;
}

// The attach connection's end or its DETACH: detaches and answers.
void EndAttachConnection(int* attach_conn, const char* reason) {
  DetachNow(reason);
  Reply(*attach_conn, "DETACHED");
  close(*attach_conn);
  *attach_conn = -1;
}

void Serve(int fd, int* attach_conn) {
  std::string why;
  if (!PeerAllowed(fd, &why)) {
    Reply(fd, "ERROR " + why);
    close(fd);
    return;
  }
  std::string line;
  int passed = -1;
  if (!ReadRequest(fd, &line, &passed)) {
    if (passed >= 0) close(passed);
    Reply(fd, "ERROR no complete request within " + std::to_string(kRequestTimeoutMs / 1000) + " s");
    close(fd);
    return;
  }
  const std::string verb = control::Verb(line);
  if (verb == "ATTACH") {
    control::AttachRequest request;
    if (!control::ParseAttach(line, &request, &why)) {
      if (passed >= 0) close(passed);
      Reply(fd, "ERROR " + why);
    } else if (passed < 0) {
      Reply(fd, "ERROR an ATTACH request must pass the aggregator connection (SCM_RIGHTS)");
    } else {
      const AttachOutcome outcome = AttachNow(request, passed);
      if (outcome.kind == AttachOutcome::kOk) {
        Reply(fd, "OK " + outcome.message);
        if (!request.persistent) {
          *attach_conn = fd;  // its end or its DETACH ends the attach
          return;
        }
      } else {
        Reply(fd, (outcome.kind == AttachOutcome::kBusy ? "BUSY " : "ERROR ") + outcome.message);
      }
    }
  } else {
    if (passed >= 0) close(passed);
    if (verb == "DETACH") {
      if (*attach_conn >= 0) {
        EndAttachConnection(attach_conn, "detach");
        Reply(fd, "DETACHED");
      } else {
        Reply(fd, DetachNow("detach") ? "DETACHED" : "ERROR not attached");
      }
    } else if (verb == "STATUS") {
      bool persistent = false;
      const bool attached = AttachedNow(&persistent);
      Reply(fd, std::string("STATUS attached=") + (attached ? "1" : "0") + " persistent=" + (persistent ? "1" : "0") +
                    " pid=" + std::to_string(getpid()));
    } else {
      Reply(fd, "ERROR unknown request " + verb.substr(0, 32));
    }
  }
  close(fd);
}

void* ControlMain(void*) {
  NoteAgentThread(static_cast<pid_t>(syscall(SYS_gettid)));
  prctl(PR_SET_NAME, "cilkprof-ctl", 0, 0, 0);
  int attach_conn = -1;
  for (;;) {
    pollfd fds[3] = {{g_listen_fd, POLLIN, 0}, {g_wake_fd, POLLIN, 0}, {attach_conn, POLLIN, 0}};
    if (poll(fds, attach_conn >= 0 ? 3 : 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents & POLLIN) {
      uint64_t ignored;
      (void)!read(g_wake_fd, &ignored, sizeof ignored);
      // The aggregator connection was lost: the attach ends (standby.h).
      if (attach_conn >= 0) {
        EndAttachConnection(&attach_conn, "connection lost");
      } else {
        DetachNow("connection lost");
      }
    }
    if (attach_conn >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
      char buf[64];
      const ssize_t n = recv(attach_conn, buf, sizeof buf, MSG_DONTWAIT);
      // EOF (the attaching cilkprof ended or was killed) or DETACH: either ends it.
      if (n <= 0 || std::string(buf, static_cast<size_t>(n)).find("DETACH") != std::string::npos) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        EndAttachConnection(&attach_conn, "detach");
      }
    }
    if (fds[0].revents & POLLIN) {
      const int fd = accept4(g_listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) Serve(MoveHigh(fd), &attach_conn);
    }
  }
  return nullptr;
}

bool StartThread(std::string* why) {
  g_wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (g_wake_fd < 0) {
    *why = "eventfd: " + ErrnoText(errno);
    return false;
  }
  sigset_t all, old;
  sigfillset(&all);
  real::pthread_sigmask()(SIG_SETMASK, &all, &old);  // the thread takes none of the program's signals
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  const int rc = real::pthread_create()(&thread, &attr, ControlMain, nullptr);
  pthread_attr_destroy(&attr);
  real::pthread_sigmask()(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    *why = "cannot start the control thread: " + ErrnoText(rc);
    return false;
  }
  return true;
}

}  // namespace

bool StartControlServer(std::string* why) {
  if (!Listen(why)) return false;
  if (StartThread(why)) return true;
  RemoveControlSocket();
  close(g_listen_fd);
  g_listen_fd = -1;
  return false;
}

bool RestartControlServerInChild(std::string* why) {
  // The parent's descriptors: closing our copies leaves the parent's socket alone.
  if (g_listen_fd >= 0) close(g_listen_fd);
  if (g_wake_fd >= 0) close(g_wake_fd);
  g_listen_fd = g_wake_fd = -1;
  g_socket_path[0] = '\0';
  return StartControlServer(why);
}

void RemoveControlSocket() {
  if (g_socket_path[0] == '\0' || getpid() != g_owner_pid) return;
  struct stat st;
  // Only our own socket: not one a later process of the same pid made (after exec).
  if (stat(g_socket_path, &st) == 0 && st.st_dev == g_socket_dev && st.st_ino == g_socket_ino) {
    unlink(g_socket_path);
  }
}

void WakeControlServer() {
  const uint64_t one = 1;
  if (g_wake_fd >= 0) (void)!write(g_wake_fd, &one, sizeof one);
}

}  // namespace cilkprof::agent
