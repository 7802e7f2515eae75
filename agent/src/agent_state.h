// The agent's process-wide state, shared by its parts (lifecycle, flusher, signals,
// interposers). Internal to libcilkprof_agent.so.
//
// Locks, always taken in this order, never from a signal handler:
//   flush_mu     the flusher's work: transport, module table, thread deltas, warnings
//   signal_mu    which signal the agent samples with (moving it: signals.cc); the
//                program's view of the signals the agent owns needs no lock
//                (program_actions.h: the interposed sigaction may run in a handler)
//   registry_mu  the list of thread records; arming and disarming sample sources
// The signal handler reads only: tls_thread, tls_in_loader, g_sampling, g_handler_mode,
// the sampler's period, and the runtime view (runtime_view.h). The interposed mask functions
// read only the kept signal and the code ranges (signal_mask.h).
#pragma once

#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <time.h>

#include <cstdint>
#include <string>
#include <vector>

#include "config.h"
#include "module_table.h"
#include "retired_threads.h"
#include "sample_source.h"
#include "thread_record.h"
#include "transport.h"

namespace cilkprof::agent {

// How long the last data of a connection may take to reach the aggregator.
inline constexpr int kExitDrainMs = 5000;

struct AgentState {
  Config config;
  // Standby (docs/AGENT.md, "Standby and attach"): armed only between an attach and its
  // detach, through the control socket; `injected`: loaded by cilkprof attach's ptrace
  // injection rather than preloaded.
  bool standby = false;
  bool injected = false;
  SamplerSettings sampler;
  pid_t pid = 0;
  uint64_t start_unix_ns = 0;
  // The command line when the agent started (Hello.argv): read then, because a program
  // may rewrite its argv strings later (BOTS marks each option it parsed "-*"; services
  // write their process title there), and the Hello is built on the flusher thread.
  std::vector<std::string> argv;

  pthread_mutex_t flush_mu = PTHREAD_MUTEX_INITIALIZER;
  Transport transport;
  ModuleTable modules;
  std::vector<std::string> warnings;  // for Hello.warnings
  RetiredThreads retired;             // what ended threads recorded, for snapshots
  bool hello_sent = false;
  bool shut_down = false;

  pthread_t flusher{};
  bool flusher_running = false;
  int wake_fd = -1;
  bool stop_flusher = false;  // atomic accesses
  // _exit/_Exit hand-off (atomic accesses): the exiting thread sets exit_requested and
  // waits, boundedly, for the flusher to set exit_flushed after the final flush.
  int exit_requested = 0;
  int exit_flushed = 0;

  pthread_mutex_t signal_mu = PTHREAD_MUTEX_INITIALIZER;

  pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
  ThreadRecord* threads = nullptr;
  uint32_t next_thread_index = 0;  // atomic accesses
  pthread_key_t exit_key{};
  // CPU time accounts for unseen threads (unsampled.h), under registry_mu.
  uint64_t cpu_base_ns = 0;           // of threads that ended before this image started
  uint64_t ended_threads_cpu_ns = 0;  // of registered threads, when they unregistered
  uint64_t flusher_cpu_ns = 0;        // of flusher threads that have ended
  uint64_t unseen_reported_ns = 0;    // sent in Goodbye messages so far
};

// Null while the agent is inactive (no CILKPROF_SOCKET, or it failed to start).
extern AgentState* g_state;
// 1 while samples are recorded; the handler ignores signals otherwise.
extern int g_sampling;
extern unwinder::Mode g_handler_mode;
extern __thread ThreadRecord* tls_thread __attribute__((tls_model("initial-exec")));
// Nonzero while the thread is inside dlclose (the loader may be editing its module
// list): the handler then unwinds with frame pointers, never libunwind.
extern __thread int tls_in_loader __attribute__((tls_model("initial-exec")));

// True when the agent runs in this process (not after fork with FOLLOW_FORK=0, not in
// a vfork child, not after shutdown).
bool AgentActive();

// Lifecycle (agent.cc).
// Constructs the state (in static storage) with the agent inactive, and sets g_state.
AgentState* NewAgentState(const Config& config);
// The thread-exit key, the wake-up eventfd, the fork and exit handlers; false with why.
bool RegisterLifecycleHooks(std::string* why);
// False, with the reason logged, when the agent cannot sample.
bool SetUpSampling(AgentState* s);
void DisarmAllThreads();
bool ArmAllLiveThreads();
// With sampling stopped and the flusher joined: the last flush, the Goodbye, a bounded
// wait for the aggregator, the end of the connection; shut_down is set.
void FlushAndSayGoodbye(const char* reason);
void RegisterCurrentThread(uint32_t thread_index);
void UnregisterCurrentThread();
uint32_t TakeThreadIndex();
bool PrepareForExec();
void ResumeAfterFailedExec();
void FlushForDlclose();
void AfterDlclose();
void FreeExitedRecord(ThreadRecord* record);  // flusher, after its last delta
// _exit/_Exit (interpose.cc): asks the flusher for the final flush and waits for it
// at most a few seconds. Async-signal-safe: no lock, no allocation on this thread.
void FinishBeforeUnderscoreExit();
// The flusher's side of it: the final flush, Goodbye("exit"), then exit_flushed.
void FinishOnFlusherForUnderscoreExit();

// Standby and attach (standby.cc; docs/AGENT.md, "Standby and attach").
// Starts a standby agent: everything but sampling and the connection, and the control
// socket (control/control_server.h). Failures are logged (a preloaded standby agent
// says why on stderr once) and leave the agent inactive; false then, with `why`.
bool StartStandby(const Config& config, bool injected, std::string* why = nullptr);
// At exit: ends an attach that is on (Goodbye "exit"), removes the control socket.
void FinishAttachAtExit();
// In a fork child of a standby process (ChildAfterFork): a control socket of its own.
void StandbyChildAfterFork();

// Flusher (flusher.cc).
void StartFlusher();
void StopFlusher();
void FlushLocked();  // flush_mu held
// Makes a spill file begin with a snapshot of everything recorded so far (transport.h).
void InstallSnapshot();
uint64_t UnixNowNs();
// This process's command line (/proc/self/cmdline), one string per argument.
std::vector<std::string> ReadCommandLine();

// Signals (signals.cc).
extern "C" void CilkprofSampleHandler(int signo, siginfo_t* info, void* context);
bool InstallSampleHandler(int signo, std::string* error);
int ChooseInitialSignal(int requested, std::string* warning);
// `discard_pending` (a detach, the process living on; every source already closed):
// first drops sample signals still pending on any thread (standby.cc).
void RestoreProgramDisposition(bool discard_pending = false);
// `caller`: the return address of the exported function, so that the agent's own
// calls (the unwinder's) are told apart from the program's.
// Async-signal-safe and lock-free (programs call sigaction in their handlers).
int InterposedSigaction(int signo, const struct sigaction* act, struct sigaction* old,
                        const void* caller);
// The flusher, flush_mu held: moves sampling off a signal the program claimed (the
// interposed sigaction only records the claim and wakes the flusher).
void MoveClaimedSamplingSignal();
bool AgentOwnsSignal(int signo, const void* caller);
void FindAgentText();  // once, at start-up
bool CalledFromAgent(const void* caller);
void DrainPendingSamples();

}  // namespace cilkprof::agent
