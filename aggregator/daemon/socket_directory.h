// The directory of cilkprofd's default socket: private to the user, so that no other
// user can take the socket's name first (and stop the daemon from starting), replace
// the socket, or connect to it (docs/SECURITY.md, "Sockets").
#pragma once

#include <string>

#include "cilkprof/common/status.h"

namespace cilkprof::daemon {

// $XDG_RUNTIME_DIR/cilkprof when XDG_RUNTIME_DIR is an absolute path, else
// /tmp/cilkprof-<uid>.
std::string DefaultSocketDirectory();

// Creates `dir` with mode 0700 if it does not exist, then checks that it is a directory
// (not a symbolic link), owned by the effective uid, with mode 0700 exactly, and that
// its parent is not a directory other users could rename it in (owned by us or root,
// and not writable by others unless sticky, as /tmp is). An error says what is wrong
// and what to do; the daemon then refuses to start.
Status PreparePrivateDirectory(const std::string& dir);

}  // namespace cilkprof::daemon
