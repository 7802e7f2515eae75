// cilkprof_make_synthetic_profile: writes a profile file of a chosen size and shape, for
// the analysis benchmark (bench/analysis) and the scale test (tests/cli, under a
// memory limit). The tree is grown depth-first like a recursive program's: from the
// current path, a new frame is called (up to --depth) or the path returns a random
// number of levels; each frame is one of --functions functions at one of a few call
// sites, a quarter of them with an inlined helper. Every leaf takes samples, with the
// five metrics of a runtime profile (samples, work, idleness, overhead, probe).
//
//   cilkprof_make_synthetic_profile -o FILE [--contexts N] [--depth D] [--functions F] [--seed S]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cilkprof/aggregator/profile_io.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: cilkprof_make_synthetic_profile -o FILE [--contexts N] [--depth D] [--functions F] "
               "[--seed S]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string output;
  uint64_t contexts = 1'000'000, depth = 64, functions = 40, seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return Usage();
    const char* value = argv[++i];
    if (arg == "-o") {
      output = value;
    } else if (arg == "--contexts") {
      contexts = std::strtoull(value, nullptr, 10);
    } else if (arg == "--depth") {
      depth = std::strtoull(value, nullptr, 10);
    } else if (arg == "--functions") {
      functions = std::strtoull(value, nullptr, 10);
    } else if (arg == "--seed") {
      seed = std::strtoull(value, nullptr, 10);
    } else {
      return Usage();
    }
  }
  if (output.empty() || contexts < 2 || depth < 1 || functions < 1) return Usage();

  using namespace cilkprof;
  profile::Profile p;
  p.set_format_version(aggregator::kProfileFormatVersion);
  auto* process = p.mutable_process();
  process->set_pid(1);
  process->set_executable("/synthetic/program");
  process->set_clock("cpu");
  process->set_period_ns(1'000'000);
  process->set_unwind_mode("dwarf");
  process->set_end_reason("exit");
  process->set_start_unix_ns(1'000'000'000);
  process->set_end_unix_ns(4'000'000'000);
  for (const char* name : {"samples", "work", "idleness", "overhead", "probe"}) {
    auto* metric = p.add_metrics();
    metric->set_name(name);
    metric->set_unit(name == std::string("samples") || name == std::string("probe") ? "count" : "ns");
  }
  p.add_modules();
  p.add_modules()->set_path("/synthetic/program");
  p.add_locations();
  constexpr int kSitesPerFunction = 4;
  for (uint64_t f = 0; f < functions; ++f) {
    const std::string name = "ns::function_" + std::to_string(f) + "(int, std::vector<int, std::allocator<int> > const&)";
    for (int site = 0; site < kSitesPerFunction; ++site) {
      auto* location = p.add_locations();
      location->set_module(1);
      location->set_offset(0x1000 + f * 0x100 + static_cast<uint64_t>(site) * 8);
      auto* frame = location->add_frames();
      frame->set_function(name);
      frame->set_file("/src/synthetic_" + std::to_string(f % 7) + ".cpp");
      frame->set_line(static_cast<uint32_t>(10 + site));
      frame->set_function_file(frame->file());
      frame->set_function_line(8);
      if (site == 3 && f % 4 == 0) {
        auto* inlined = location->add_frames();
        inlined->set_function("ns::helper<int>(int)");
        inlined->set_file("/src/helper.h");
        inlined->set_line(3);
        inlined->set_function_file("/src/helper.h");
        inlined->set_function_line(1);
        inlined->set_inlined(true);
      }
    }
  }
  const auto location_count = static_cast<uint32_t>(p.locations_size() - 1);

  std::mt19937_64 rng(seed);
  p.add_nodes();  // the root
  std::vector<uint32_t> path{0};
  uint64_t samples = 0;
  p.mutable_nodes()->Reserve(static_cast<int>(contexts));
  for (uint64_t n = 1; n < contexts; ++n) {
    // Return a few levels now and then, more rarely far: paths stay deep.
    if (path.size() > 1 && (path.size() > depth || rng() % 3 == 0)) {
      const uint64_t up = 1 + rng() % std::min<uint64_t>(path.size() - 1, rng() % 8 == 0 ? depth : 3);
      path.resize(path.size() - up);
    }
    auto* node = p.add_nodes();
    node->set_parent(path.back());
    node->set_location(1 + static_cast<uint32_t>(rng() % location_count));
    node->set_edge(rng() % 4 == 0 ? wire::EDGE_SPAWN : wire::EDGE_CALL);
    if (rng() % 2 == 0) {
      const double weight = 1e6 * static_cast<double>(1 + rng() % 3);
      node->add_exclusive(1);
      node->add_exclusive(weight);
      node->add_exclusive(rng() % 5 == 0 ? weight / 2 : 0);
      node->add_exclusive(rng() % 7 == 0 ? weight / 4 : 0);
      ++samples;
    }
    path.push_back(static_cast<uint32_t>(n));
  }
  p.add_threads()->set_tid(1);
  p.mutable_totals()->set_samples(samples);
  p.mutable_totals()->set_overhead_samples(samples / 7);
  p.mutable_totals()->set_idle_samples(samples / 10);
  p.mutable_totals()->set_idle_ns(samples / 10 * 1'000'000);
  if (Status written = aggregator::WriteProfileFile(output, p); !written.ok()) {
    std::fprintf(stderr, "cilkprof_make_synthetic_profile: %s\n", written.message().c_str());
    return 1;
  }
  return 0;
}
