// Opening the aggregator's listening sockets (internal to the server).
#pragma once

#include <sys/types.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <string>

#include "cilkprof/common/status.h"

namespace cilkprof::aggregator::internal {

// Binds and listens on a Unix stream socket at `path` with `mode` (0600: its owner
// only). The socket is bound under a temporary name in the same directory, chmod'ed
// and listening before it is renamed to `path`, so `path` never exists with other
// permissions or without a listener. A stale socket at `path` (nobody accepts on it)
// is replaced; a live one or a non-socket file is an error. `inode` receives the
// socket's inode, for RemoveUnixSocketIfOurs.
Status ListenUnix(const std::string& path, boost::asio::local::stream_protocol::acceptor* acceptor,
                  ino_t* inode, mode_t mode = 0600);

// A warning when the directory of `path` lets other users replace the socket (writable
// by group or others without the sticky bit), else empty. Agents that connect there
// could then be talking to someone else's listener.
std::string SharedDirectoryWarning(const std::string& path);

// Removes `path` if it is still the socket we created (same inode).
void RemoveUnixSocketIfOurs(const std::string& path, ino_t inode);

// Parses "host:port" or "[v6addr]:port", resolves it and listens.
Status ListenTcp(const std::string& endpoint, boost::asio::ip::tcp::acceptor* acceptor);

}  // namespace cilkprof::aggregator::internal
