#include "module_table.h"

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>

namespace cilkprof::agent {
namespace {

std::string ExecutablePath() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "[executable]";
  return std::string(buf, static_cast<size_t>(n));
}

size_t AlignUp(size_t value, size_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

// Reads NT_GNU_BUILD_ID from a PT_NOTE segment mapped at [data, data + size).
std::string BuildIdFromNotes(const char* data, size_t size, size_t alignment) {
  alignment = alignment == 8 ? 8 : 4;
  size_t pos = 0;
  while (pos + sizeof(ElfW(Nhdr)) <= size) {
    ElfW(Nhdr) header;
    std::memcpy(&header, data + pos, sizeof header);
    const size_t name_at = pos + sizeof header;
    const size_t desc_at = name_at + AlignUp(header.n_namesz, alignment);
    const size_t next = desc_at + AlignUp(header.n_descsz, alignment);
    if (desc_at + header.n_descsz > size || next <= pos) break;
    if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
        std::memcmp(data + name_at, "GNU", 4) == 0) {
      return std::string(data + desc_at, header.n_descsz);
    }
    pos = next;
  }
  return {};
}

struct ScanState {
  std::vector<ModuleInfo> found;
  bool first = true;
  uint64_t vdso = 0;
};

int OnModule(struct dl_phdr_info* info, size_t, void* opaque) {
  auto* state = static_cast<ScanState*>(opaque);
  const bool first = state->first;
  state->first = false;
  ModuleInfo m;
  m.load_bias = info->dlpi_addr;
  uint64_t lowest_load = UINT64_MAX;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uint64_t at = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD) {
      lowest_load = std::min<uint64_t>(lowest_load, at - (ph.p_vaddr & (ph.p_align - 1)));
      if (ph.p_flags & PF_X) {
        m.exec_ranges.emplace_back(at, at + ph.p_memsz);
      } else {
        m.data_ranges.emplace_back(at, at + ph.p_memsz);
      }
    } else if (ph.p_type == PT_NOTE && m.build_id.empty()) {
      m.build_id = BuildIdFromNotes(reinterpret_cast<const char*>(at), ph.p_memsz, ph.p_align);
    }
  }
  if (m.exec_ranges.empty()) return 0;
  m.start = m.exec_ranges.front().first;
  m.end = m.exec_ranges.front().second;
  for (const auto& r : m.exec_ranges) {
    m.start = std::min(m.start, r.first);
    m.end = std::max(m.end, r.second);
  }
  const char* name = info->dlpi_name;
  if (state->vdso != 0 && lowest_load == state->vdso) {
    m.path = "[vdso]";
  } else if (name == nullptr || name[0] == '\0') {
    m.path = first ? ExecutablePath() : "[unnamed]";
  } else {
    m.path = name;
  }
  state->found.push_back(std::move(m));
  return 0;
}

bool SameModule(const ModuleInfo& a, const ModuleInfo& b) {
  return a.load_bias == b.load_bias && a.start == b.start && a.end == b.end && a.path == b.path;
}

int ReadLoaderCounters(struct dl_phdr_info* info, size_t size, void* opaque) {
  auto* counters = static_cast<unsigned long long*>(opaque);
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    counters[0] = info->dlpi_adds;
    counters[1] = info->dlpi_subs;
  }
  return 1;  // the counters are the same in every entry: stop after the first
}

}  // namespace

void ModuleTable::RefreshIfChanged() {
  unsigned long long counters[2] = {0, 0};
  dl_iterate_phdr(ReadLoaderCounters, counters);
  if (modules_.empty() || counters[0] != seen_adds_ || counters[1] != seen_subs_) Refresh();
}

void ModuleTable::Refresh() {
  {
    unsigned long long counters[2] = {0, 0};
    dl_iterate_phdr(ReadLoaderCounters, counters);
    seen_adds_ = counters[0];
    seen_subs_ = counters[1];
  }
  refreshed_this_cycle_ = true;
  ScanState state;
  state.vdso = getauxval(AT_SYSINFO_EHDR);
  dl_iterate_phdr(OnModule, &state);

  for (ModuleInfo& known : modules_) {
    if (known.unloaded) continue;
    const bool present = std::any_of(state.found.begin(), state.found.end(),
                                     [&](const ModuleInfo& m) { return SameModule(known, m); });
    if (!present) {
      known.unloaded = true;
      known.announced = false;
    }
  }
  for (ModuleInfo& m : state.found) {
    const bool known = std::any_of(modules_.begin(), modules_.end(), [&](const ModuleInfo& k) {
      return !k.unloaded && SameModule(k, m);
    });
    if (!known) {
      m.id = next_id_++;
      modules_.push_back(std::move(m));
    }
  }
  RebuildIndex();
}

void ModuleTable::RebuildIndex() {
  index_.clear();
  data_index_.clear();
  for (uint32_t i = 0; i < modules_.size(); ++i) {
    if (modules_[i].unloaded) continue;
    for (const auto& r : modules_[i].exec_ranges) index_.push_back(Range{r.first, r.second, i});
    for (const auto& r : modules_[i].data_ranges) data_index_.push_back(Range{r.first, r.second, i});
  }
  const auto by_start = [](const Range& a, const Range& b) { return a.start < b.start; };
  std::sort(index_.begin(), index_.end(), by_start);
  std::sort(data_index_.begin(), data_index_.end(), by_start);
}

namespace {

const ModuleInfo* FindIn(const std::vector<ModuleTable::Range>& index,
                         const std::vector<ModuleInfo>& modules, uintptr_t address) {
  auto it = std::upper_bound(index.begin(), index.end(), uint64_t{address},
                             [](uint64_t value, const ModuleTable::Range& r) { return value < r.start; });
  if (it == index.begin()) return nullptr;
  --it;
  return address < it->end ? &modules[it->module] : nullptr;
}

}  // namespace

const ModuleInfo* ModuleTable::Find(uintptr_t pc) const { return FindIn(index_, modules_, pc); }

const ModuleInfo* ModuleTable::FindData(uintptr_t address) const {
  return FindIn(data_index_, modules_, address);
}

ResolvedPc ModuleTable::ResolveData(uintptr_t address) {
  const ModuleInfo* m = FindData(address);
  if (m == nullptr) return ResolvedPc{0, address};
  return ResolvedPc{m->id, address - m->load_bias};
}

ResolvedPc ModuleTable::Resolve(uintptr_t pc) {
  const ModuleInfo* m = Find(pc);
  if (m == nullptr && !refreshed_this_cycle_) {
    Refresh();
    m = Find(pc);
  }
  if (m == nullptr) return ResolvedPc{0, pc};
  return ResolvedPc{m->id, pc - m->load_bias};
}

namespace {

LoadModuleMsg Announcement(const ModuleInfo& m) {
  return LoadModuleMsg{m.id, m.path, m.build_id, m.load_bias, m.start, m.end, m.unloaded};
}

}  // namespace

std::vector<LoadModuleMsg> ModuleTable::Declarations() const {
  std::vector<LoadModuleMsg> all;
  for (const ModuleInfo& m : modules_) all.push_back(Announcement(m));
  return all;
}

std::vector<LoadModuleMsg> ModuleTable::TakeChanges() {
  std::vector<LoadModuleMsg> changes;
  for (ModuleInfo& m : modules_) {
    if (m.announced) continue;
    m.announced = true;
    changes.push_back(Announcement(m));
  }
  // An unloaded module has been announced as such: nothing refers to it any more.
  modules_.erase(std::remove_if(modules_.begin(), modules_.end(),
                                [](const ModuleInfo& m) { return m.unloaded && m.announced; }),
                 modules_.end());
  RebuildIndex();
  return changes;
}

void ModuleTable::ResendAll() {
  modules_.erase(std::remove_if(modules_.begin(), modules_.end(),
                                [](const ModuleInfo& m) { return m.unloaded; }),
                 modules_.end());
  for (ModuleInfo& m : modules_) m.announced = false;
  RebuildIndex();
}

}  // namespace cilkprof::agent
