// The agent as libomp's OMPT tool (docs/OPENMP.md, "How the tool attaches").
#pragma once

#include <string>
#include <vector>

namespace cilkprof::agent::ompt {

// Why OpenMP tasks of this process will get no task view from the agent, found at the
// agent's start (before the Hello) or at an `attach`: OMP_TOOL=disabled, another OMPT
// tool that libomp finds before the agent's, (`injected`) an agent that arrived after
// libomp started, or (`attach` only: `cilkprof run` says it itself) GCC's libgomp, which
// has no OMPT. Appends at most one warning to `warnings`; none when the process has no
// OpenMP runtime or the agent's tool is (or will be) libomp's. Not signal-safe.
void NoteOpenMpWithoutTool(bool attach, bool injected, std::vector<std::string>* warnings);

// Whether libomp called the agent's ompt_start_tool and initialize accepted it.
bool OmptToolActive();

// In a fork child, from the agent's atfork handler: the OpenMP records forget the
// parent's other threads (ompt_records.h) and the creation paths' locks are free.
void AfterForkInChild();

}  // namespace cilkprof::agent::ompt
