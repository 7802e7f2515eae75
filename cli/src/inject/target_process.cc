#include "inject/target_process.h"

#include <dirent.h>
#include <pwd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace cilkprof::cli::inject {
namespace {

std::string ProcPath(pid_t pid, const char* leaf) {
  return "/proc/" + std::to_string(pid) + "/" + leaf;
}

Status NoSuchProcess(pid_t pid) {
  return Status::Error("no process with PID " + std::to_string(pid) +
                       " (check the PID with `ps -p " + std::to_string(pid) + "`)");
}

}  // namespace

Result<ProcessStatus> ReadProcessStatus(pid_t pid) {
  std::ifstream in(ProcPath(pid, "status"));
  if (!in) return NoSuchProcess(pid);
  ProcessStatus status;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    if (key == "Name:") {
      status.name = line.size() > 6 ? line.substr(6) : "";
    } else if (key == "State:") {
      fields >> status.state;
    } else if (key == "PPid:") {
      fields >> status.ppid;
    } else if (key == "TracerPid:") {
      fields >> status.tracer_pid;
    } else if (key == "Uid:") {
      for (uid_t& uid : status.uids) fields >> uid;
    } else if (key == "SigIgn:") {
      std::string mask;
      fields >> mask;
      status.ignored_signals = std::strtoull(mask.c_str(), nullptr, 16);
    } else if (key == "Gid:") {
      for (gid_t& gid : status.gids) fields >> gid;
    }
  }
  if (status.state == '?') return NoSuchProcess(pid);
  return status;
}

Result<std::vector<Mapping>> ReadMappings(pid_t pid) {
  std::ifstream in(ProcPath(pid, "maps"));
  if (!in) return NoSuchProcess(pid);
  std::vector<Mapping> mappings;
  std::string line;
  while (std::getline(in, line)) {
    Mapping mapping;
    char perms[8] = {};
    unsigned dev_major = 0, dev_minor = 0;
    int path_start = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
                    &mapping.start, &mapping.end, perms, &mapping.offset, &dev_major, &dev_minor,
                    &mapping.inode, &path_start) < 7) {
      continue;
    }
    mapping.executable = perms[2] == 'x';
    if (path_start > 0 && static_cast<size_t>(path_start) <= line.size()) {
      mapping.path = line.substr(static_cast<size_t>(path_start));
    }
    mappings.push_back(std::move(mapping));
  }
  if (mappings.empty()) return NoSuchProcess(pid);  // a zombie has no memory map
  return mappings;
}

std::vector<pid_t> ListThreads(pid_t pid) {
  std::vector<pid_t> tids;
  DIR* dir = ::opendir(ProcPath(pid, "task").c_str());
  if (!dir) return tids;
  while (dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    long tid = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && tid > 0) tids.push_back(static_cast<pid_t>(tid));
  }
  ::closedir(dir);
  return tids;
}

std::string MappingBasename(const Mapping& mapping) {
  std::string path = mapping.path;
  static const std::string kDeleted = " (deleted)";
  if (path.size() > kDeleted.size() && path.compare(path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0) {
    path.resize(path.size() - kDeleted.size());
  }
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool IsLibcName(const std::string& basename) {
  return basename.rfind("libc.so", 0) == 0 || basename.rfind("libc-", 0) == 0 ||
         basename.rfind("libc.musl", 0) == 0;
}

bool HaveCapSysPtrace() {
  constexpr int kCapSysPtrace = 19;  // linux/capability.h
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) == 0) {
      unsigned long long caps = std::strtoull(line.c_str() + 7, nullptr, 16);
      return (caps >> kCapSysPtrace) & 1;
    }
  }
  return false;
}

std::string DescribeUser(uid_t uid) {
  passwd entry{};
  passwd* found = nullptr;
  char buffer[1024];
  std::string text;
  if (::getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) == 0 && found) text = std::string(found->pw_name) + " ";
  return text + "(uid " + std::to_string(uid) + ")";
}

std::string DescribeProcess(pid_t pid) {
  std::ifstream in(ProcPath(pid, "comm"));
  std::string name;
  if (in && std::getline(in, name)) return std::to_string(pid) + " (" + name + ")";
  return std::to_string(pid);
}

std::optional<int> YamaPtraceScope() {
  std::ifstream in("/proc/sys/kernel/yama/ptrace_scope");
  int scope = 0;
  if (in >> scope) return scope;
  return std::nullopt;
}

bool IsAncestorOf(pid_t ancestor, pid_t pid) {
  for (int depth = 0; depth < 4096 && pid > 0; ++depth) {
    if (pid == ancestor) return true;
    Result<ProcessStatus> status = ReadProcessStatus(pid);
    if (!status.ok()) return false;
    pid = status->ppid;
  }
  return false;
}

}  // namespace cilkprof::cli::inject
