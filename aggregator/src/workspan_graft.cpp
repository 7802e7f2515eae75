#include "cilkprof/aggregator/workspan_graft.h"

#include <map>
#include <string>
#include <tuple>
#include <utility>

namespace cilkprof::aggregator {
namespace {

// Both profiles name code the same way: (module path, build-id, offset); module 0 is
// the unknown module, whose offsets are absolute addresses.
using ModuleKey = std::pair<std::string, std::string>;  // path, build-id

// The sampled profile's modules and locations by identity, extended as call sites need.
class LocationMap {
 public:
  explicit LocationMap(profile::Profile* into) : into_(into) {
    for (int i = 0; i < into->modules_size(); ++i) {
      modules_.emplace(ModuleKey(into->modules(i).path(), into->modules(i).build_id()), i);
    }
    for (int i = 1; i < into->locations_size(); ++i) {
      const profile::Location& location = into->locations(i);
      locations_.emplace(std::make_pair(location.module(), location.offset()), i);
    }
  }

  // The index in the sampled profile of `from`'s location `index` (0 stays 0).
  uint32_t Map(const profile::Profile& from, uint32_t index) {
    if (index == 0) return 0;
    const profile::Location& location = from.locations(static_cast<int>(index));
    const uint32_t module = MapModule(from.modules(static_cast<int>(location.module())));
    auto [it, added] =
        locations_.emplace(std::make_pair(module, location.offset()), static_cast<uint32_t>(into_->locations_size()));
    if (added) {
      profile::Location* copy = into_->add_locations();
      *copy = location;
      copy->set_module(module);
    }
    return it->second;
  }

 private:
  uint32_t MapModule(const profile::Module& module) {
    auto [it, added] = modules_.emplace(ModuleKey(module.path(), module.build_id()),
                                        static_cast<uint32_t>(into_->modules_size()));
    if (added) *into_->add_modules() = module;
    return it->second;
  }

  profile::Profile* into_;
  std::map<ModuleKey, uint32_t> modules_;
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> locations_;
};

// "": the two profiles are of the same program; else why not.
std::string DifferentProgram(const profile::Profile& instrumented, const profile::Profile& sampled) {
  if (instrumented.process().executable() != sampled.process().executable()) {
    return "the runs are of different programs (" + sampled.process().executable() + " and " +
           instrumented.process().executable() + ")";
  }
  std::map<std::string, std::string> build_ids;
  for (const profile::Module& module : sampled.modules()) {
    if (!module.path().empty()) build_ids.emplace(module.path(), module.build_id());
  }
  for (const profile::Module& module : instrumented.modules()) {
    auto it = build_ids.find(module.path());
    if (it != build_ids.end() && it->second != module.build_id()) {
      return module.path() + " changed between the two runs (another build-id): rebuilt while it ran?";
    }
  }
  return "";
}

}  // namespace

Status GraftWorkSpan(const profile::Profile& instrumented, profile::Profile* sampled) {
  if (!instrumented.has_workspan()) {
    return Status::Error("the instrumented run recorded no work/span figures");
  }
  if (sampled->has_workspan()) {
    return Status::Error("the sampled profile already has work/span figures");
  }
  if (std::string why = DifferentProgram(instrumented, *sampled); !why.empty()) return Status::Error(why);
  const int location_count = instrumented.locations_size();
  for (const profile::CallSite& site : instrumented.workspan().call_sites()) {
    for (uint32_t index : {site.location(), site.parent_location(), site.callee_location()}) {
      if (index >= static_cast<uint32_t>(location_count)) {
        return Status::Error("the instrumented run's profile names a location it does not have");
      }
    }
  }

  LocationMap map(sampled);
  profile::WorkSpan* out = sampled->mutable_workspan();
  *out = instrumented.workspan();
  for (profile::CallSite& site : *out->mutable_call_sites()) {
    site.set_location(map.Map(instrumented, site.location()));
    site.set_parent_location(map.Map(instrumented, site.parent_location()));
    site.set_callee_location(map.Map(instrumented, site.callee_location()));
  }
  const profile::ProcessInfo& run = instrumented.process();
  out->set_separate_run_pid(run.pid());
  out->set_separate_run_ns(run.end_unix_ns() > run.start_unix_ns() ? run.end_unix_ns() - run.start_unix_ns() : 0);
  return Status::Ok();
}

}  // namespace cilkprof::aggregator
