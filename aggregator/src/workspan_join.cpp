// The work/span call-site table joined into the profile (see workspan_join.h).
#include "cilkprof/aggregator/workspan_join.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <set>
#include <utility>

namespace cilkprof::aggregator {
namespace {

constexpr size_t kMaxRegionNames = 64;

Status CheckLocation(const wire::WorkSpanLocation& location, const std::set<uint32_t>& modules,
                     const char* what, uint32_t site) {
  if (location.module() != 0 && modules.count(location.module()) == 0) {
    return Status::Error(fmt::format("work/span call site {}: its {} refers to module {}, which this "
                                     "message does not list",
                                     site, what, location.module()));
  }
  return Status::Ok();
}

}  // namespace

Status WorkSpanJoin::Validate(const wire::WorkSpanDelta& delta) const {
  if (seen_ && !delta.clock().empty() && delta.clock() != clock_) {
    return Status::Error(fmt::format("the work/span clock changed from \"{}\" to \"{}\" within one connection",
                                     clock_, delta.clock()));
  }
  if (seen_ && !delta.unit().empty() && delta.unit() != unit_) {
    return Status::Error(fmt::format("the work/span unit changed from \"{}\" to \"{}\" within one connection",
                                     unit_, delta.unit()));
  }
  std::set<uint32_t> modules;
  for (const wire::WorkSpanModule& m : delta.modules()) {
    if (m.index() == 0 || !modules.insert(m.index()).second) {
      return Status::Error(fmt::format("work/span module index {} is 0 or listed twice", m.index()));
    }
  }
  std::set<uint32_t> ids;
  for (const wire::WorkSpanSite& site : delta.sites()) {
    if (site.id() == 0) return Status::Error("a work/span call site has id 0");
    if (!ids.insert(site.id()).second) {
      return Status::Error(fmt::format("work/span call site {} appears twice in one message", site.id()));
    }
    const bool known = sites_.count(site.id()) != 0;
    if (!known) {
      if (site.kind() != wire::WORKSPAN_CALL && site.kind() != wire::WORKSPAN_SPAWN &&
          site.kind() != wire::WORKSPAN_STRAND) {
        return Status::Error(fmt::format("work/span call site {} first appears without a known kind", site.id()));
      }
      if (!site.has_location()) {
        return Status::Error(fmt::format("work/span call site {} first appears without its location", site.id()));
      }
      if (site.kind() == wire::WORKSPAN_STRAND &&
          (site.start_point() == wire::STRAND_POINT_UNKNOWN || site.end_point() == wire::STRAND_POINT_UNKNOWN ||
           !wire::WorkSpanStrandPoint_IsValid(site.start_point()) ||
           !wire::WorkSpanStrandPoint_IsValid(site.end_point()))) {
        return Status::Error(fmt::format("work/span strand {} first appears without valid start and end points", site.id()));
      }
    } else if (site.has_location() || site.has_parent()) {
      return Status::Error(fmt::format("work/span call site {} is defined a second time", site.id()));
    }
    if (site.has_location()) CILKPROF_RETURN_IF_ERROR(CheckLocation(site.location(), modules, "location", site.id()));
    if (site.has_parent()) CILKPROF_RETURN_IF_ERROR(CheckLocation(site.parent(), modules, "parent", site.id()));
    if (site.has_callee()) CILKPROF_RETURN_IF_ERROR(CheckLocation(site.callee(), modules, "callee", site.id()));
  }
  if (!delta.whatif_span().empty()) {
    if (delta.whatif_factors().empty() || delta.whatif_span_size() % delta.whatif_factors_size() != 0) {
      return Status::Error("the work/span what-if spans do not match the list of factors");
    }
    if (!whatif_span_.empty() && static_cast<size_t>(delta.whatif_span_size()) != whatif_span_.size()) {
      return Status::Error("the number of work/span what-if spans changed within one connection");
    }
    for (double v : delta.whatif_span()) {
      if (!std::isfinite(v)) return Status::Error("a work/span what-if span is not a finite number");
    }
  }
  for (uint32_t f : delta.whatif_factors()) {
    if (f < 2) return Status::Error(fmt::format("work/span what-if factor {} is below 2", f));
  }
  if (static_cast<size_t>(delta.regions_size()) > kMaxRegionNames) {
    return Status::Error(fmt::format("the work/span message lists {} regions (at most {})", delta.regions_size(),
                                     kMaxRegionNames));
  }
  return Status::Ok();
}

void WorkSpanJoin::Merge(const wire::WorkSpanDelta& delta) {
  seen_ = true;
  seen_in_window_ = true;
  if (!delta.clock().empty()) clock_ = delta.clock();
  if (!delta.unit().empty()) unit_ = delta.unit();
  if (delta.burden() != 0) burden_ = delta.burden();
  std::map<uint32_t, std::pair<std::string, std::string>> modules;
  for (const wire::WorkSpanModule& m : delta.modules()) modules[m.index()] = {m.path(), m.build_id()};
  auto address = [&](const wire::WorkSpanLocation& location) {
    Address a;
    a.present = true;
    a.offset = location.offset();
    if (location.module() != 0) {
      a.path = modules[location.module()].first;
      a.build_id = modules[location.module()].second;
    }
    return a;
  };
  for (const wire::WorkSpanSite& s : delta.sites()) {
    Site& site = sites_[s.id()];
    if (s.kind() != wire::WORKSPAN_SITE_UNKNOWN && site.kind == 0) site.kind = s.kind();
    if (s.has_location()) site.location = address(s.location());
    if (s.has_parent()) site.parent = address(s.parent());
    if (s.has_callee() && !site.callee.present) site.callee = address(s.callee());
    if (s.start_point() != wire::STRAND_POINT_UNKNOWN) site.start_point = s.start_point();
    if (s.end_point() != wire::STRAND_POINT_UNKNOWN) site.end_point = s.end_point();
    site.count += s.count();
    site.work_on_work += s.work_on_work();
    site.span_on_work += s.span_on_work();
    site.work_on_span += s.work_on_span();
    site.span_on_span += s.span_on_span();
    site.burdened_span_on_work += s.burdened_span_on_work();
  }
  work_ += delta.work();
  span_ += delta.span();
  burdened_span_ += delta.burdened_span();
  spawns_ += delta.spawns();
  syncs_ += delta.syncs();
  computations_ += delta.computations();
  regions_dropped_ += delta.regions_dropped();
  sites_dropped_ += delta.sites_dropped();
  incomplete_ = incomplete_ || delta.incomplete();
  if (!delta.model().empty()) model_ = delta.model();
  tasks_with_dependences_ += delta.tasks_with_dependences();
  if (static_cast<size_t>(delta.regions_size()) >= regions_.size()) {
    regions_.assign(delta.regions().begin(), delta.regions().end());
  }
  if (!delta.whatif_factors().empty()) factors_.assign(delta.whatif_factors().begin(), delta.whatif_factors().end());
  if (!delta.whatif_span().empty()) {
    if (whatif_span_.empty()) whatif_span_.assign(static_cast<size_t>(delta.whatif_span_size()), 0.0);
    for (int i = 0; i < delta.whatif_span_size(); ++i) whatif_span_[static_cast<size_t>(i)] += delta.whatif_span(i);
  }
}

WorkSpanJoin WorkSpanJoin::TakeWindow() {
  WorkSpanJoin window = *this;
  window.seen_ = seen_in_window_;
  std::erase_if(window.sites_, [](const auto& entry) {
    const Site& s = entry.second;
    return s.count == 0 && s.work_on_work == 0 && s.span_on_work == 0 && s.work_on_span == 0 &&
           s.span_on_span == 0 && s.burdened_span_on_work == 0;
  });
  seen_in_window_ = false;
  for (auto& [id, site] : sites_) {
    site.count = site.work_on_work = site.span_on_work = site.work_on_span = site.span_on_span = 0;
    site.burdened_span_on_work = 0;
  }
  work_ = span_ = burdened_span_ = spawns_ = syncs_ = computations_ = 0;
  regions_dropped_ = sites_dropped_ = tasks_with_dependences_ = 0;
  std::fill(whatif_span_.begin(), whatif_span_.end(), 0.0);
  return window;
}

void WorkSpanJoin::Build(SymbolSource& symbols, profile::Profile* out) const {
  if (!seen_) return;
  std::map<std::pair<std::string, std::string>, uint32_t> module_index;
  for (int i = 0; i < out->modules_size(); ++i) {
    module_index.emplace(std::make_pair(out->modules(i).path(), out->modules(i).build_id()), static_cast<uint32_t>(i));
  }
  if (out->modules_size() == 0) out->add_modules();  // modules[0]: the unknown module
  if (out->locations_size() == 0) out->add_locations();  // locations[0] is unused
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> location_index;
  for (int i = 1; i < out->locations_size(); ++i) {
    location_index.emplace(std::make_pair(out->locations(i).module(), out->locations(i).offset()),
                           static_cast<uint32_t>(i));
  }
  auto location_of = [&](const Address& a) -> uint32_t {
    if (!a.present) return 0;
    uint32_t module = 0;
    if (!a.path.empty()) {
      auto [it, inserted] =
          module_index.emplace(std::make_pair(a.path, a.build_id), static_cast<uint32_t>(out->modules_size()));
      if (inserted) {
        profile::Module* m = out->add_modules();
        m->set_path(a.path);
        m->set_build_id(a.build_id);
      }
      module = it->second;
    }
    auto [it, inserted] =
        location_index.emplace(std::make_pair(module, a.offset), static_cast<uint32_t>(out->locations_size()));
    if (inserted) {
      profile::Location* location = out->add_locations();
      location->set_module(module);
      location->set_offset(a.offset);
      std::vector<profile::SourceFrame> frames;
      if (module != 0) {
        try {
          frames = symbols.Symbolize(a.path, a.build_id, a.offset);
        } catch (const std::exception&) {
          frames.clear();
        }
      }
      if (frames.empty()) {
        profile::SourceFrame unknown;
        unknown.set_function(module == 0 ? fmt::format("0x{:x}", a.offset) : "??");
        frames.push_back(std::move(unknown));
      }
      for (profile::SourceFrame& frame : frames) *location->add_frames() = std::move(frame);
    }
    return it->second;
  };

  profile::WorkSpan* ws = out->mutable_workspan();
  ws->set_clock(clock_);
  ws->set_unit(unit_);
  ws->set_burden(burden_);
  ws->set_work(work_);
  ws->set_span(span_);
  ws->set_burdened_span(burdened_span_);
  ws->set_spawns(spawns_);
  ws->set_syncs(syncs_);
  ws->set_computations(computations_);
  for (const std::string& r : regions_) ws->add_regions(r);
  for (uint32_t f : factors_) ws->add_whatif_factors(f);
  // Only the sets of regions that exist: all regions, then each named region.
  if (!factors_.empty() && !whatif_span_.empty()) {
    const size_t sets = std::min(whatif_span_.size() / factors_.size(), regions_.size() + 1);
    for (size_t i = 0; i < sets * factors_.size(); ++i) ws->add_whatif_span(whatif_span_[i]);
  }
  ws->set_regions_dropped(regions_dropped_);
  ws->set_sites_dropped(sites_dropped_);
  ws->set_incomplete(incomplete_);
  ws->set_model(model_);
  ws->set_tasks_with_dependences(tasks_with_dependences_);
  for (const auto& [id, site] : sites_) {
    profile::CallSite* c = ws->add_call_sites();
    c->set_kind(static_cast<wire::WorkSpanSiteKind>(site.kind));
    c->set_location(location_of(site.location));
    c->set_parent_location(location_of(site.parent));
    c->set_callee_location(location_of(site.callee));
    c->set_count(site.count);
    c->set_work_on_work(site.work_on_work);
    c->set_span_on_work(site.span_on_work);
    c->set_work_on_span(site.work_on_span);
    c->set_span_on_span(site.span_on_span);
    c->set_burdened_span_on_work(site.burdened_span_on_work);
    c->set_start_point(static_cast<wire::WorkSpanStrandPoint>(site.start_point));
    c->set_end_point(static_cast<wire::WorkSpanStrandPoint>(site.end_point));
  }
}

}  // namespace cilkprof::aggregator
