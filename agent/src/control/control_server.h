// The control socket of a standby agent and the thread that serves it (protocol:
// common/include/cilkprof/common/control_protocol.h; docs/AGENT.md, "Standby and
// attach").
//
// The socket is /tmp/cilkprof-<euid>/agent-<pid>.sock. The directory must be the
// agent's user's, mode 0700, not a symbolic link; the agent creates it if missing and
// otherwise refuses to listen (a directory another user made first could let them
// replace the socket). The socket is made mode 0600 under a temporary name and renamed
// into place. Every connection's peer must be the agent's user or root (SO_PEERCRED).
//
// The control thread blocks every signal and waits in poll() on the socket, the attach
// connection (while one is on) and a wake-up eventfd; it is the only thread a standby
// agent adds to the program. Not signal-safe.
#pragma once

#include <string>

namespace cilkprof::agent {

// Creates the socket and starts the control thread; false with the reason.
bool StartControlServer(std::string* why);
// In a fork child: the parent's socket and thread are not this process's.
bool RestartControlServerInChild(std::string* why);
// Removes the socket file (at exit): a later process with the same pid starts clean.
void RemoveControlSocket();
// The flusher: the aggregator connection was lost; the control thread detaches.
void WakeControlServer();

}  // namespace cilkprof::agent
