// The symbolizer's cost on a real module, and its names for before/after comparisons
// (docs/SYMBOLIZATION.md, "Caching and cost"). Not a test: run it by hand.
//
//   cilkprof_symbolizer_bench MODULE [ADDRESSES [RUNS]]   time per address
//   cilkprof_symbolizer_bench --dump MODULE [ADDRESSES]   every address's frames, outermost
//                                                         first, tab-separated
//
// The addresses are spread evenly over the module's executable segments. Each run
// uses a fresh Symbolizer, so opening the module and building its indexes is counted,
// as it is for a profile symbolized once.
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cilkprof/aggregator/symbolizer.h"

namespace {

struct Segment {
  uint64_t start;
  uint64_t size;
};

// The executable PT_LOAD segments' [vaddr, vaddr + filesz): ELF virtual addresses,
// which is what the agent records as offsets.
std::vector<Segment> ExecutableSegments(const char* path) {
  std::vector<Segment> segments;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return segments;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  size_t count = 0;
  if (elf != nullptr && elf_getphdrnum(elf, &count) == 0) {
    for (size_t i = 0; i < count; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr) continue;
      if (phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X) != 0 && phdr.p_filesz > 0) {
        segments.push_back(Segment{phdr.p_vaddr, phdr.p_filesz});
      }
    }
  }
  if (elf != nullptr) elf_end(elf);
  close(fd);
  return segments;
}

std::vector<uint64_t> SpreadAddresses(const std::vector<Segment>& segments, uint64_t wanted) {
  uint64_t total = 0;
  for (const Segment& segment : segments) total += segment.size;
  std::vector<uint64_t> addresses;
  if (total == 0 || wanted == 0) return addresses;
  const uint64_t step = std::max<uint64_t>(1, total / wanted);
  for (uint64_t position = step / 2; position < total && addresses.size() < wanted;
       position += step) {
    uint64_t remaining = position;
    for (const Segment& segment : segments) {
      if (remaining < segment.size) {
        addresses.push_back(segment.start + remaining);
        break;
      }
      remaining -= segment.size;
    }
  }
  return addresses;
}

// CPU time of this process: steadier than the wall clock on a shared machine.
double CpuMicroseconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e6 + static_cast<double>(now.tv_nsec) / 1e3;
}

int Usage() {
  std::fprintf(stderr,
               "usage: cilkprof_symbolizer_bench MODULE [ADDRESSES [RUNS]]\n"
               "       cilkprof_symbolizer_bench --dump MODULE [ADDRESSES]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const bool dump = argc > 1 && std::strcmp(argv[1], "--dump") == 0;
  const int first = dump ? 2 : 1;
  if (argc <= first || argc > first + (dump ? 2 : 3)) return Usage();
  const char* module = argv[first];
  const uint64_t wanted = argc > first + 1 ? std::strtoull(argv[first + 1], nullptr, 10) : 4000;
  const int runs = !dump && argc > first + 2 ? std::atoi(argv[first + 2]) : 5;

  const std::vector<uint64_t> addresses = SpreadAddresses(ExecutableSegments(module), wanted);
  if (addresses.empty()) {
    std::fprintf(stderr, "%s: no executable segment to sample (not an ELF file?)\n", module);
    return 1;
  }

  if (dump) {
    cilkprof::aggregator::Symbolizer symbolizer;
    for (uint64_t address : addresses) {
      std::string line;
      for (const auto& frame : symbolizer.Symbolize(module, "", address)) {
        line += '\t';
        line += frame.function();
      }
      std::printf("%" PRIx64 "%s\n", address, line.c_str());
    }
    return 0;
  }

  std::vector<double> wall_us, cpu_us;  // per address, one per run
  const double count = static_cast<double>(addresses.size());
  for (int run = 0; run < runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = CpuMicroseconds();
    cilkprof::aggregator::Symbolizer symbolizer;
    size_t frames = 0;
    for (uint64_t address : addresses) frames += symbolizer.Symbolize(module, "", address).size();
    cpu_us.push_back((CpuMicroseconds() - cpu_start) / count);
    const std::chrono::duration<double, std::micro> elapsed =
        std::chrono::steady_clock::now() - start;
    wall_us.push_back(elapsed.count() / count);
    std::printf("run %d: %zu addresses, %zu frames, %.1f us per address (%.1f us CPU)\n", run + 1,
                addresses.size(), frames, wall_us.back(), cpu_us.back());
  }
  std::sort(wall_us.begin(), wall_us.end());
  std::sort(cpu_us.begin(), cpu_us.end());
  std::printf("median %.1f us per address (%.1f us CPU)\n", wall_us[wall_us.size() / 2],
              cpu_us[cpu_us.size() / 2]);
  return 0;
}
