#include "module_session.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cilkprof::aggregator::symbolizer_internal {
namespace {

// Dwfl's standard offline callbacks. A null *debuginfo_path selects elfutils' default
// search path ":.debug:/usr/lib/debug" (plus the build-id directory), as in eu-addr2line.
char* g_debuginfo_path = nullptr;
const Dwfl_Callbacks kOfflineCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &g_debuginfo_path,
};

std::string LibdwError() {
  const char* message = dwfl_errmsg(-1);
  return message != nullptr ? message : "unknown libdw error";
}

// Size of an in-memory ELF image: the furthest of its loaded contents and its
// section headers (the vDSO maps both).
size_t ElfImageSize(const ElfW(Ehdr)* ehdr) {
  size_t size = ehdr->e_shoff + size_t{ehdr->e_shnum} * ehdr->e_shentsize;
  const auto* phdrs = reinterpret_cast<const ElfW(Phdr)*>(
      reinterpret_cast<const char*>(ehdr) + ehdr->e_phoff);
  for (int i = 0; i < ehdr->e_phnum; ++i) {
    if (phdrs[i].p_type == PT_LOAD) {
      size = std::max<size_t>(size, phdrs[i].p_offset + phdrs[i].p_filesz);
    }
  }
  return size;
}

}  // namespace

std::string HexBytes(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (unsigned char byte : bytes) {
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 0xf]);
  }
  return hex;
}

bool IsVdsoName(const std::string& path) {
  return path == "[vdso]" || path == "linux-vdso.so.1" || path == "linux-gate.so.1";
}

Result<std::unique_ptr<ModuleSession>> ModuleSession::Open(const std::string& path,
                                                           const std::string& expected_build_id) {
  Result<std::unique_ptr<ModuleSession>> session =
      IsVdsoName(path) ? OpenVdso(path) : OpenFile(path);
  if (!session.ok()) return session;
  Status verified = (*session)->Finish(path, expected_build_id);
  if (!verified.ok()) return verified;
  return session;
}

Result<std::unique_ptr<ModuleSession>> ModuleSession::OpenFile(const std::string& path) {
  if (path.empty()) {
    return Status::Error("a module has no path (the agent could not name it); its frames show as "
                         "module offsets");
  }
  // Check before handing the path to libdw so that the message can say what to do, and
  // so that a FIFO or device named in a corrupt profile can never block us.
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    const int error = errno;
    return Status::Error("module " + path + ": " + std::strerror(error) +
                         (error == ENOENT ? " (deleted or moved since profiling? restore it, or "
                                            "re-run the profile, to get function names)"
                                          : ""));
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::Error("module " + path + ": not a regular file, so it cannot be symbolized");
  }
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    return Status::Error("module " + path + ": cannot open it: " + std::strerror(error) +
                         " (give the profiler's user read access to get function names)");
  }

  auto session = std::unique_ptr<ModuleSession>(new ModuleSession());
  session->dwfl_ = dwfl_begin(&kOfflineCallbacks);
  if (session->dwfl_ == nullptr) {
    close(fd);
    return Status::Error("module " + path + ": libdw could not start a session: " + LibdwError());
  }
  dwfl_report_begin(session->dwfl_);
  // Base 0 relative to the program headers: Dwfl addresses equal ELF virtual addresses,
  // whatever the file type (ET_EXEC ignores the base; prelinked ET_DYN keeps its p_vaddr).
  session->module_ = dwfl_report_elf(session->dwfl_, path.c_str(), path.c_str(), fd,
                                     /*base=*/0, /*add_p_vaddr=*/true);
  if (session->module_ == nullptr) {
    close(fd);  // only consumed on success
    return Status::Error("module " + path + ": not a usable ELF file: " + LibdwError());
  }
  if (dwfl_report_end(session->dwfl_, nullptr, nullptr) != 0) {
    return Status::Error("module " + path + ": libdw could not index it: " + LibdwError());
  }
  return session;
}

Result<std::unique_ptr<ModuleSession>> ModuleSession::OpenVdso(const std::string& path) {
  const auto* ehdr = reinterpret_cast<const ElfW(Ehdr)*>(getauxval(AT_SYSINFO_EHDR));
  if (ehdr == nullptr || std::memcmp(ehdr->e_ident, ELFMAG, SELFMAG) != 0) {
    return Status::Error("module " + path + ": this process has no vDSO to read it from");
  }
  auto session = std::unique_ptr<ModuleSession>(new ModuleSession());
  // A private copy: libelf may want writable memory, and the vDSO's pages are read-only.
  const char* begin = reinterpret_cast<const char*>(ehdr);
  session->image_.assign(begin, begin + ElfImageSize(ehdr));
  session->dwfl_ = dwfl_begin(&kOfflineCallbacks);
  if (session->dwfl_ == nullptr) {
    return Status::Error("module " + path + ": libdw could not start a session: " + LibdwError());
  }
  dwfl_report_begin(session->dwfl_);
  session->module_ = dwfl_report_offline_memory(session->dwfl_, path.c_str(), path.c_str(),
                                                session->image_.data(), session->image_.size());
  if (session->module_ == nullptr || dwfl_report_end(session->dwfl_, nullptr, nullptr) != 0) {
    return Status::Error("module " + path + ": libdw cannot read this process's vDSO: " +
                         LibdwError());
  }
  return session;
}

Status ModuleSession::Finish(const std::string& path, const std::string& expected_build_id) {
  GElf_Addr bias = 0;
  if (dwfl_module_getelf(module_, &bias) == nullptr) {
    return Status::Error("module " + path + ": libdw cannot read its ELF data: " + LibdwError());
  }
  // Offline reporting places ET_DYN images at a libdw-chosen base; files reported
  // with dwfl_report_elf at base 0 have bias 0. Either way: Dwfl address = vaddr + bias.
  bias_ = bias;

  const unsigned char* bits = nullptr;
  GElf_Addr bits_vaddr = 0;
  const int length = dwfl_module_build_id(module_, &bits, &bits_vaddr);
  const std::string actual = length > 0 ? std::string(reinterpret_cast<const char*>(bits),
                                                      static_cast<size_t>(length))
                                        : std::string();
  if (expected_build_id.empty() || actual == expected_build_id) return Status::Ok();

  const std::string what = IsVdsoName(path) ? "the vDSO of this kernel" : "the file on disk";
  return Status::Error(
      "module " + path + ": " + what + " has build-id " +
      (actual.empty() ? std::string("(none)") : HexBytes(actual)) +
      " but the profiled program had " + HexBytes(expected_build_id) +
      (IsVdsoName(path) ? " (profiled under another kernel?)"
                        : " (rebuilt or replaced since profiling?)") +
      "; its frames show as module offsets. Re-run the profile against the current file to get "
      "function names");
}

ModuleSession::~ModuleSession() {
  if (dwfl_ != nullptr) dwfl_end(dwfl_);
}

}  // namespace cilkprof::aggregator::symbolizer_internal
