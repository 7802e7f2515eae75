#include "inject/injector.h"

#include <dlfcn.h>
#include <elf.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "inject/elf_symbols.h"
#include "inject/remote_call.h"
#include "inject/target_process.h"
#include "inject/thread_choice.h"
#include "inject/thread_stopper.h"

namespace cilkprof::cli::inject {
namespace {

using std::chrono::milliseconds;

constexpr char kStartFunction[] = "cilkprof_agent_start_injected";
constexpr char kErrorVariable[] = "cilkprof_agent_injection_error";
constexpr std::size_t kErrorSize = 256;
// The borrowed thread runs dlopen, the agent's constructors and its start on a stack
// of its own: the thread's stack may be small or nearly full.
constexpr std::uint64_t kScratchSize = 1 << 20;
// Quick libc calls, and the calls that run the loader and the agent's start.
constexpr milliseconds kShortCallTimeout{5'000};
constexpr milliseconds kLoadTimeout{30'000};
// How often to let the threads run on when every one is inside the runtime libraries.
constexpr int kMaxChoiceRounds = 20;

std::string Pid(pid_t pid) { return std::to_string(pid); }

// Functions of the target's C library the injection calls.
struct TargetFunctions {
  std::uint64_t mmap = 0, munmap = 0, errno_location = 0, dlopen = 0, dlsym = 0, dlerror = 0, dlclose = 0;
};

Result<TargetFunctions> ResolveTargetFunctions(pid_t pid, const std::vector<Mapping>& mappings) {
  std::optional<LoadedObject> libc = FindLoadedObject(pid, mappings, IsLibcName);
  if (!libc) {
    return Status::Error("process " + Pid(pid) +
                         " is statically linked (no libc.so in its memory map): the agent can only be injected "
                         "into dynamically linked programs; start it with `cilkprof run` instead");
  }
  const std::vector<std::string> names = {"mmap", "munmap", "__errno_location", "dlopen", "dlsym", "dlerror", "dlclose"};
  Result<std::map<std::string, std::uint64_t>> found = LookUpFunctions(*libc, names);
  if (!found.ok()) return found.status();
  // glibc before 2.34 keeps the dl* functions in libdl.so.2, when the program loaded it.
  if (!found->count("dlopen")) {
    std::optional<LoadedObject> libdl = FindLoadedObject(
        pid, mappings, [](const std::string& name) { return name.rfind("libdl.so", 0) == 0 || name.rfind("libdl-", 0) == 0; });
    if (libdl) {
      Result<std::map<std::string, std::uint64_t>> more = LookUpFunctions(*libdl, names);
      if (more.ok()) found->insert(more->begin(), more->end());
    }
  }
  for (const std::string& name : names) {
    if (!found->count(name)) {
      return Status::Error("the C library of process " + Pid(pid) + " (" + libc->path_in_target + ") has no " + name +
                           (name.rfind("dl", 0) == 0
                                ? " (glibc before 2.34 keeps it in libdl.so.2, which this program has not loaded): "
                                  "start the program with `cilkprof run --standby` instead"
                                : ""));
    }
  }
  TargetFunctions functions;
  functions.mmap = found->at("mmap");
  functions.munmap = found->at("munmap");
  functions.errno_location = found->at("__errno_location");
  functions.dlopen = found->at("dlopen");
  functions.dlsym = found->at("dlsym");
  functions.dlerror = found->at("dlerror");
  functions.dlclose = found->at("dlclose");
  return functions;
}

// The kernel's ptrace access rules (ptrace_may_access and Yama), checked up front so
// the refusal says what to change rather than "Operation not permitted".
Status CheckPermission(pid_t pid, const ProcessStatus& target) {
  const bool privileged = HaveCapSysPtrace();
  const uid_t uid = ::getuid();
  const gid_t gid = ::getgid();
  if (!privileged) {
    for (int i = 0; i < 3; ++i) {
      if (target.uids[i] != uid) {
        return Status::Error("process " + Pid(pid) + " belongs to user " + DescribeUser(target.uids[i]) +
                             " and you are " + DescribeUser(uid) + ": run `cilkprof attach` as that user, or as "
                             "root (attaching to another user's process needs CAP_SYS_PTRACE)");
      }
      if (target.gids[i] != gid) {
        return Status::Error("process " + Pid(pid) + " runs with group id " + std::to_string(target.gids[i]) +
                             " (a setgid program?) and yours is " + std::to_string(gid) +
                             ": run `cilkprof attach` as root (it needs CAP_SYS_PTRACE)");
      }
    }
    // /proc/PID belongs to root when the process is not dumpable.
    struct stat proc_dir {};
    if (::stat(("/proc/" + Pid(pid)).c_str(), &proc_dir) == 0 && proc_dir.st_uid != target.uids[1]) {
      return Status::Error("process " + Pid(pid) + " is not dumpable (a setuid program, or it called "
                           "prctl(PR_SET_DUMPABLE, 0)): only root can attach to it");
    }
  }
  return CheckYamaScope(YamaPtraceScope(), privileged,
                        [pid] { return IsAncestorOf(::getpid(), pid); });
}

Status CheckArchitecture(pid_t pid) {
  std::ifstream exe("/proc/" + Pid(pid) + "/exe", std::ios::binary);
  Elf64_Ehdr header{};
  if (!exe.read(reinterpret_cast<char*>(&header), sizeof header)) return Status::Ok();  // unreadable: ptrace will say
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 &&
      (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_machine != EM_X86_64)) {
    return Status::Error("process " + Pid(pid) + " is not an x86-64 program: injection supports x86-64 only");
  }
  return Status::Ok();
}

// The agent file as the target will open it: through its root, with its credentials.
Status CheckAgentFile(pid_t pid, const std::string& agent_path, const ProcessStatus& target) {
  struct stat file {};
  const std::string seen_by_target = "/proc/" + Pid(pid) + "/root" + agent_path;
  if (::stat(seen_by_target.c_str(), &file) != 0) {
    return Status::Error("the agent " + agent_path + " does not exist in process " + Pid(pid) +
                         "'s view of the file system (a container or chroot?): install cilkprof inside it");
  }
  const uid_t euid = target.uids[1];
  const gid_t egid = target.gids[1];
  const bool readable = euid == 0 || (file.st_uid == euid ? (file.st_mode & S_IRUSR)
                                      : file.st_gid == egid ? (file.st_mode & S_IRGRP)
                                                            : (file.st_mode & S_IROTH));
  if (!readable) {
    return Status::Error("the agent " + agent_path + " is not readable by process " + Pid(pid) + "'s user " +
                         DescribeUser(euid) + ": make it readable (chmod a+r " + agent_path + ")");
  }
  return Status::Ok();
}

Result<std::string> AbsolutePath(const std::string& path) {
  char resolved[PATH_MAX];
  if (!::realpath(path.c_str(), resolved)) {
    return Status::Error("cannot find the agent " + path + ": " + std::strerror(errno));
  }
  return std::string(resolved);
}

// The best thread to borrow, or 0 when each one is inside the runtime libraries.
pid_t ChooseThread(std::vector<ThreadStopper::Held>& threads, const UnsafeCode& unsafe_code) {
  pid_t best = 0;
  ThreadSafety best_safety = ThreadSafety::kUnsafe;
  for (const ThreadStopper::Held& held : threads) {
    if (!held.stopped || held.pending_signal != 0) continue;
    ThreadSafety safety = ClassifyThread(held.regs, unsafe_code);
    if (safety < best_safety) {
      best = held.tid;
      best_safety = safety;
    }
  }
  return best;
}

// The calls in the borrowed thread: everything between saving and restoring it.
class AgentLoader {
 public:
  AgentLoader(pid_t pid, pid_t tid, const ThreadState& saved, const TargetFunctions& functions)
      : pid_(pid), tid_(tid), functions_(functions), caller_(pid, tid, saved) {}

  Status Run(const std::string& agent_path) {
    Status status = LoadAndStart(agent_path);
    Status cleanup = CleanUp();
    return status.ok() ? cleanup : status;
  }
  bool thread_gone() const { return caller_.thread_gone(); }

 private:
  Status LoadAndStart(const std::string& agent_path) {
    // dlopen sets errno even when it succeeds; the program may be about to read its own.
    Result<std::uint64_t> errno_address = caller_.Call(functions_.errno_location, {}, kShortCallTimeout, "__errno_location()");
    if (!errno_address.ok()) return errno_address.status();
    CILKPROF_RETURN_IF_ERROR(ReadMemory(tid_, *errno_address, &saved_errno_, sizeof saved_errno_));
    errno_address_ = *errno_address;

    Result<std::uint64_t> scratch = caller_.Call(
        functions_.mmap,
        {0, kScratchSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE,
         static_cast<std::uint64_t>(-1), 0},
        kShortCallTimeout, "mmap()");
    if (!scratch.ok()) return scratch.status();
    if (*scratch == reinterpret_cast<std::uint64_t>(MAP_FAILED)) {
      return Status::Error("process " + Pid(pid_) + " could not map 1 MiB for the injection (out of memory?)");
    }
    scratch_ = *scratch;
    caller_.SetStackTop(scratch_ + kScratchSize);
    // The strings at the bottom of the scratch area, the stack grows down from its top.
    const std::uint64_t path_address = scratch_;
    const std::uint64_t start_name = path_address + agent_path.size() + 1;
    const std::uint64_t error_name = start_name + sizeof kStartFunction;
    CILKPROF_RETURN_IF_ERROR(WriteMemory(tid_, path_address, agent_path.c_str(), agent_path.size() + 1));
    CILKPROF_RETURN_IF_ERROR(WriteMemory(tid_, start_name, kStartFunction, sizeof kStartFunction));
    CILKPROF_RETURN_IF_ERROR(WriteMemory(tid_, error_name, kErrorVariable, sizeof kErrorVariable));

    // RTLD_GLOBAL: a task-parallel runtime that starts after the injection finds the
    // agent's cilkprof_tool_attach with dlsym(RTLD_DEFAULT) and attaches at once (its
    // first computations then have logical paths). Harmless to the program's bindings:
    // the global scope is searched in load order, so libc's definitions of the functions
    // the agent also exports stay first.
    Result<std::uint64_t> handle = caller_.Call(functions_.dlopen, {path_address, RTLD_NOW | RTLD_GLOBAL}, kLoadTimeout,
                                                "dlopen(\"" + agent_path + "\")");
    if (!handle.ok()) return handle.status();
    if (*handle == 0) {
      return Status::Error("process " + Pid(pid_) + " could not load the agent: " + LoaderError());
    }
    Result<std::uint64_t> start = caller_.Call(functions_.dlsym, {*handle, start_name}, kShortCallTimeout, "dlsym()");
    if (!start.ok()) return start.status();
    if (*start == 0) {
      // Not our agent: unload it again, it has not started anything of ours.
      caller_.Call(functions_.dlclose, {*handle}, kShortCallTimeout, "dlclose()");
      return Status::Error(agent_path + " has no function " + kStartFunction +
                           ": it is not the cilkprof agent (or one too old to be injected)");
    }
    Result<std::uint64_t> started = caller_.Call(*start, {}, kLoadTimeout, std::string(kStartFunction) + "()");
    if (!started.ok()) return started.status();
    if (static_cast<std::int32_t>(*started) != 0) {
      return Status::Error("the agent was loaded into process " + Pid(pid_) + " but did not start: " +
                           AgentError(*handle, error_name));
    }
    return Status::Ok();
  }

  std::string LoaderError() {
    Result<std::uint64_t> message = caller_.Call(functions_.dlerror, {}, kShortCallTimeout, "dlerror()");
    if (!message.ok() || *message == 0) return "dlopen failed and gave no reason";
    Result<std::string> text = ReadCString(tid_, *message, 4096);
    return text.ok() ? *text : "dlopen failed and its reason could not be read";
  }

  std::string AgentError(std::uint64_t handle, std::uint64_t error_name) {
    Result<std::uint64_t> error = caller_.Call(functions_.dlsym, {handle, error_name}, kShortCallTimeout, "dlsym()");
    if (!error.ok() || *error == 0) return "it gave no reason";
    Result<std::string> text = ReadCString(tid_, *error, kErrorSize);
    return text.ok() && !text->empty() ? *text : "it gave no reason";
  }

  Status CleanUp() {
    if (caller_.thread_gone()) return Status::Ok();
    Status status;
    if (scratch_ != 0) {
      caller_.UseThreadStack();  // munmap must not return on the stack it unmaps
      Result<std::uint64_t> unmapped = caller_.Call(functions_.munmap, {scratch_, kScratchSize}, kShortCallTimeout, "munmap()");
      if (!unmapped.ok()) status = unmapped.status();
    }
    if (errno_address_ != 0 && !caller_.thread_gone()) {
      Status written = WriteMemory(tid_, errno_address_, &saved_errno_, sizeof saved_errno_);
      if (status.ok()) status = written;
    }
    return status;
  }

  pid_t pid_;
  pid_t tid_;
  TargetFunctions functions_;
  RemoteCaller caller_;
  std::uint64_t scratch_ = 0;
  std::uint64_t errno_address_ = 0;
  int saved_errno_ = 0;
};

}  // namespace

bool AgentLoaded(pid_t pid, const std::string& agent_path) {
  Result<std::vector<Mapping>> mappings = ReadMappings(pid);
  if (!mappings.ok()) return false;
  struct stat agent {};
  const bool have_agent_file = !agent_path.empty() && ::stat(agent_path.c_str(), &agent) == 0;
  const std::string agent_name = agent_path.substr(agent_path.rfind('/') + 1);
  for (const Mapping& mapping : *mappings) {
    const std::string name = MappingBasename(mapping);
    if (name.rfind("libcilkprof_agent", 0) == 0) return true;
    // The same file: its inode, under its name (the device of a mapping is not
    // comparable across the overlay file systems of containers).
    if (have_agent_file && mapping.inode == agent.st_ino && name == agent_name) return true;
  }
  return false;
}

Status CheckYamaScope(std::optional<int> scope, bool privileged, const std::function<bool()>& is_ancestor) {
  if (!scope || *scope == 0) return Status::Ok();
  if (*scope >= 3) {
    return Status::Error("kernel.yama.ptrace_scope is 3: ptrace is disabled on this system until reboot, so "
                         "the agent cannot be injected; start the program with the standby agent instead "
                         "(`cilkprof run --standby`, or LD_PRELOAD=libcilkprof_agent.so CILKPROF_STANDBY=1)");
  }
  if (privileged) return Status::Ok();
  if (*scope == 2) {
    return Status::Error("kernel.yama.ptrace_scope is 2: only root (CAP_SYS_PTRACE) may attach to a process; "
                         "run `cilkprof attach` as root");
  }
  if (!is_ancestor()) {
    return Status::Error("kernel.yama.ptrace_scope is 1: a process may only be attached to by its ancestors; "
                         "run `cilkprof attach` as root, or allow it with `sudo sysctl kernel.yama.ptrace_scope=0`");
  }
  return Status::Ok();
}

Status CheckInjectable(pid_t pid, const std::string& agent_path) {
#if !defined(__x86_64__)
  return Status::Error("injecting the agent is implemented for x86-64 only; start the program with "
                       "`cilkprof run --standby` instead");
#endif
  if (pid <= 0) return Status::Error(std::to_string(pid) + " is not a process id");
  if (pid == ::getpid()) return Status::Error("cilkprof cannot attach to itself");
  Result<ProcessStatus> target = ReadProcessStatus(pid);
  if (!target.ok()) return target.status();
  if (target->state == 'Z' || target->state == 'X') {
    return Status::Error("process " + Pid(pid) + " has exited (it is a zombie its parent has not reaped)");
  }
  if (target->tracer_pid != 0) {
    return Status::Error("process " + Pid(pid) + " is already traced by process " + DescribeProcess(target->tracer_pid) +
                         " (a debugger or strace?): detach it first, then try again");
  }
  if (target->state == 'T' || target->state == 't') {
    return Status::Error("process " + Pid(pid) + " is stopped: continue it first (`kill -CONT " + Pid(pid) + "`)");
  }
  CILKPROF_RETURN_IF_ERROR(CheckPermission(pid, *target));
  CILKPROF_RETURN_IF_ERROR(CheckArchitecture(pid));
  if ((target->ignored_signals >> (SIGSEGV - 1)) & 1) {
    return Status::Error("process " + Pid(pid) + " ignores SIGSEGV, which injection would reset to its default; "
                         "start the program with `cilkprof run --standby` instead");
  }
  Result<std::string> agent = AbsolutePath(agent_path);
  if (!agent.ok()) return agent.status();
  if (AgentLoaded(pid, *agent)) {
    return Status::Error("the agent is already loaded in process " + Pid(pid) +
                         " (preloaded, or injected by an earlier attach): attach through its control socket");
  }
  Result<std::vector<Mapping>> mappings = ReadMappings(pid);
  if (!mappings.ok()) return mappings.status();
  Result<TargetFunctions> functions = ResolveTargetFunctions(pid, *mappings);
  if (!functions.ok()) return functions.status();
  return CheckAgentFile(pid, *agent, *target);
}

Status InjectAgent(pid_t pid, const std::string& agent_path, InjectionReport* report) {
  CILKPROF_RETURN_IF_ERROR(CheckInjectable(pid, agent_path));
  Result<std::string> agent = AbsolutePath(agent_path);
  if (!agent.ok()) return agent.status();
  Result<std::vector<Mapping>> mappings = ReadMappings(pid);
  if (!mappings.ok()) return mappings.status();
  Result<TargetFunctions> functions = ResolveTargetFunctions(pid, *mappings);
  if (!functions.ok()) return functions.status();
  const UnsafeCode unsafe_code = FindUnsafeCode(*mappings);

  // Declared before the stopper: its destructor detaches every thread on any return.
  InjectionReport local_report;
  InjectionReport& out = report ? *report : local_report;
  ThreadStopper stopper(pid);
  auto finish = [&](Status status) {
    stopper.ReleaseAll();
    out.longest_stop = stopper.longest_stop();
    return status;
  };

  pid_t chosen = 0;
  for (int round = 0; round < kMaxChoiceRounds && chosen == 0; ++round) {
    if (round > 0) {
      // Every thread was inside the runtime libraries: let them run on a little.
      Status resumed = stopper.ResumeAll();
      if (!resumed.ok()) return finish(resumed);
      std::this_thread::sleep_for(milliseconds(round));
    }
    Status stopped = stopper.StopAll();
    if (!stopped.ok()) return finish(stopped);
    chosen = ChooseThread(stopper.threads(), unsafe_code);
  }
  out.threads = static_cast<int>(stopper.threads().size());
  if (chosen == 0) {
    return finish(Status::Error("each thread of process " + Pid(pid) + " was inside the C or C++ runtime "
                                "libraries (allocating, loading, unwinding) at each of " +
                                std::to_string(kMaxChoiceRounds) + " tries; nothing was changed, try again"));
  }
  out.hijacked_tid = chosen;
  // The others run on while the chosen thread loads the agent: a lock one of them holds
  // (malloc's, say) is released as usual, and the stall is over for them.
  std::vector<pid_t> others;
  for (const ThreadStopper::Held& held : stopper.threads()) {
    if (held.tid != chosen) others.push_back(held.tid);
  }
  for (pid_t tid : others) stopper.Release(tid);

  Result<ThreadState> saved = SaveThreadState(chosen);
  if (!saved.ok()) return finish(saved.status());
  AgentLoader loader(pid, chosen, *saved, *functions);
  Status loaded = loader.Run(*agent);
  if (loader.thread_gone()) return finish(loaded);
  Status restored = RestoreThreadState(chosen, *saved);
  if (!restored.ok()) {
    return finish(Status::Error(restored.message() + "; thread " + Pid(chosen) + " of process " + Pid(pid) +
                                " may not resume where it was"));
  }
  return finish(loaded);
}

}  // namespace cilkprof::cli::inject
