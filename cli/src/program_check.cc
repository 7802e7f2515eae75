#include "program_check.h"

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "commands.h"

namespace cilkprof::cli {
namespace {

enum class Access { kOk, kMissing, kDirectory, kNotExecutable };

Access Probe(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Access::kMissing;
  if (S_ISDIR(st.st_mode)) return Access::kDirectory;
  if (::access(path.c_str(), X_OK) != 0 || (st.st_mode & 0111) == 0) return Access::kNotExecutable;
  return Access::kOk;
}

ProgramCheck Fail(int code, std::string message) {
  ProgramCheck check;
  check.exit_code = code;
  check.error = std::move(message);
  return check;
}

// The ELF identity of this process (class and machine) that a program must share.
struct Identity {
  unsigned char elf_class = 0;
  uint16_t machine = 0;
};

Identity OwnIdentity() {
  Identity id;
  std::ifstream self("/proc/self/exe", std::ios::binary);
  Elf64_Ehdr header{};
  if (self.read(reinterpret_cast<char*>(&header), sizeof header)) {
    id.elf_class = header.e_ident[EI_CLASS];
    id.machine = header.e_machine;
  }
  return id;
}

// Checks an executable file's contents. `shown` is the name used in messages.
ProgramCheck CheckImage(const std::string& path, const std::string& shown, int depth) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Fail(kExitCannotExecute, "cannot read '" + shown + "': " + std::strerror(errno));
  char head[sizeof(Elf64_Ehdr)] = {};
  file.read(head, sizeof head);
  const auto got = static_cast<size_t>(file.gcount());

  if (got >= 2 && head[0] == '#' && head[1] == '!') {
    if (depth >= 4) return Fail(kExitCannotExecute, "'" + shown + "': too many levels of #! interpreters");
    file.clear();
    file.seekg(0);
    std::string first_line;
    std::getline(file, first_line);
    size_t start = first_line.find_first_not_of(" \t", 2);
    if (start == std::string::npos) {
      return Fail(kExitCannotExecute, "'" + shown + "' starts with #! but names no interpreter");
    }
    const size_t end = first_line.find_first_of(" \t\r", start);
    const std::string interpreter = first_line.substr(start, end == std::string::npos ? std::string::npos : end - start);
    switch (Probe(interpreter)) {
      case Access::kOk: break;
      case Access::kMissing:
        return Fail(kExitCannotExecute, "the interpreter of '" + shown + "', " + interpreter + ", is not found");
      default:
        return Fail(kExitCannotExecute, "the interpreter of '" + shown + "', " + interpreter + ", is not executable");
    }
    ProgramCheck inner = CheckImage(interpreter, interpreter + " (the interpreter of " + shown + ")", depth + 1);
    if (!inner.error.empty()) return inner;
    ProgramCheck ok;
    ok.path = path;
    return ok;
  }

  if (got < EI_NIDENT || std::memcmp(head, ELFMAG, SELFMAG) != 0) {
    return Fail(kExitCannotExecute, "'" + shown + "' is neither an ELF executable nor a script starting with #!; "
                                    "give the program itself");
  }
  const Identity own = OwnIdentity();
  const auto elf_class = static_cast<unsigned char>(head[EI_CLASS]);
  if (elf_class != ELFCLASS64 || got < sizeof(Elf64_Ehdr)) {
    return Fail(kExitCannotExecute, "'" + shown + "' is a 32-bit program and the agent is 64-bit; "
                                    "build the program for this machine's 64-bit ABI");
  }
  Elf64_Ehdr header;
  std::memcpy(&header, head, sizeof header);
  if (own.elf_class == ELFCLASS64 && own.machine != 0 && header.e_machine != own.machine) {
    return Fail(kExitCannotExecute, "'" + shown + "' is built for another processor architecture "
                                    "(ELF machine " + std::to_string(header.e_machine) + "); the agent cannot be loaded into it");
  }
  if (header.e_type != ET_EXEC && header.e_type != ET_DYN) {
    return Fail(kExitCannotExecute, "'" + shown + "' is an ELF file but not an executable");
  }
  bool has_interpreter = false;
  if (header.e_phentsize >= sizeof(Elf64_Phdr)) {
    for (unsigned i = 0; i < header.e_phnum && !has_interpreter; ++i) {
      Elf64_Phdr phdr{};
      file.clear();
      file.seekg(static_cast<std::streamoff>(header.e_phoff + static_cast<uint64_t>(i) * header.e_phentsize));
      if (!file.read(reinterpret_cast<char*>(&phdr), sizeof phdr)) break;
      has_interpreter = phdr.p_type == PT_INTERP;
    }
  }
  if (!has_interpreter) {
    return Fail(kExitCannotExecute, "'" + shown + "' is a static binary: the agent cannot be preloaded into it; "
                                    "relink it dynamically (without -static)");
  }
  ProgramCheck ok;
  ok.path = path;
  return ok;
}

}  // namespace

ProgramCheck CheckProgram(const std::string& name, const char* path_env) {
  if (name.empty()) return Fail(kExitUsage, "no program given: cilkprof run [options] -- PROGRAM [ARGS...]");
  std::string resolved;
  if (name.find('/') != std::string::npos) {
    switch (Probe(name)) {
      case Access::kMissing:
        return Fail(kExitNotFound, "cannot run '" + name + "': not found (no such file); check the path");
      case Access::kDirectory:
        return Fail(kExitCannotExecute, "cannot run '" + name + "': it is a directory");
      case Access::kNotExecutable:
        return Fail(kExitCannotExecute, "cannot run '" + name + "': not executable (no execute permission); "
                                        "chmod +x it, or run it through its interpreter");
      case Access::kOk:
        resolved = name;
    }
  } else {
    // execvp's search: each PATH entry in order ("" means the current directory); the
    // first executable regular file wins, a non-executable match is remembered.
    const std::string path = path_env ? path_env : "/bin:/usr/bin";
    bool found_unexecutable = false;
    size_t begin = 0;
    while (begin <= path.size()) {
      size_t end = path.find(':', begin);
      if (end == std::string::npos) end = path.size();
      std::string dir = path.substr(begin, end - begin);
      const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
      const Access access = Probe(candidate);
      if (access == Access::kOk) {
        resolved = candidate;
        break;
      }
      if (access == Access::kNotExecutable) found_unexecutable = true;
      begin = end + 1;
    }
    if (resolved.empty()) {
      if (found_unexecutable) {
        return Fail(kExitCannotExecute, "cannot run '" + name + "': found in PATH but not executable; chmod +x it");
      }
      return Fail(kExitNotFound, "cannot run '" + name + "': command not found in PATH; give its path or check the spelling");
    }
  }
  return CheckImage(resolved, name, 0);
}

}  // namespace cilkprof::cli
