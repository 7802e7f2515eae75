// Checking, before anything runs, that a program can be profiled: found like execvp
// finds it, executable, and a dynamically linked ELF of this machine's class (the
// agent is preloaded by the dynamic loader, so a static binary cannot host it). A
// script's interpreter is checked instead ("#!" line, up to 4 levels as Linux does).
#pragma once

#include <string>

namespace cilkprof::cli {

struct ProgramCheck {
  std::string path;      // resolved path to execute (as execvp would)
  std::string error;     // empty when the program can be profiled
  int exit_code = 0;     // 127 not found, 126 cannot be run under the agent
};

// `path_env` is $PATH (nullptr: unset, then the default /bin:/usr/bin of execvp).
ProgramCheck CheckProgram(const std::string& name, const char* path_env);

}  // namespace cilkprof::cli
