// Joining the work/span call-site table to the address-level tree (callsite_columns.h).
#include "cilkprof/views/callsite_columns.h"
#include "cilkprof/views/workspan.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>

namespace cilkprof::views {
namespace {

// A code address independent of how the profile interned it.
using AddressKey = std::tuple<std::string, std::string, uint64_t>;  // module path, build-id, offset

bool ValidLocation(const profile::Profile& p, uint32_t location) {
  return location > 0 && location < static_cast<uint32_t>(p.locations_size());
}

std::optional<AddressKey> AddressOf(const profile::Profile& p, uint32_t location) {
  if (!ValidLocation(p, location)) return std::nullopt;
  const profile::Location& l = p.locations(static_cast<int>(location));
  const profile::Module* module =
      l.module() == 0 || l.module() >= static_cast<uint32_t>(p.modules_size()) ? nullptr
                                                                              : &p.modules(static_cast<int>(l.module()));
  return AddressKey{module ? module->path() : "", module ? module->build_id() : "", l.offset()};
}

}  // namespace

CallSiteTable CallSiteTableOf(const profile::Profile& p) {
  CallSiteTable table;
  if (!p.has_workspan()) return table;
  const profile::WorkSpan& ws = p.workspan();
  table.present = true;
  table.unit = ws.unit().empty() ? "ns" : ws.unit();
  table.program_span = static_cast<double>(ws.span());
  for (const profile::CallSite& c : ws.call_sites()) {
    CallSiteFigures f;
    f.work_on_work = static_cast<double>(c.work_on_work());
    f.span_on_work = static_cast<double>(c.span_on_work());
    f.span_on_span = static_cast<double>(c.span_on_span());
    f.count = c.count();
    table.sites.push_back(f);
  }
  return table;
}

const profile::SourceFrame* CallSiteUserFrame(const profile::Profile& p, uint32_t site) {
  if (!p.has_workspan() || site >= static_cast<uint32_t>(p.workspan().call_sites_size())) return nullptr;
  const uint32_t location = p.workspan().call_sites(static_cast<int>(site)).location();
  return UserFrameAt(p, location);  // the frame `view callsites` shows (workspan.h)
}

NodeSites JoinCallSitesToNodes(const profile::Profile& p) { return JoinCallSitesToNodes(p, ProfileNodes::Of(p)); }

NodeSites JoinCallSitesToNodes(const profile::Profile& p, const ProfileNodes& nodes) {
  NodeSites result;
  const size_t node_count = nodes.size();
  if (!p.has_workspan() || node_count == 0) return result;
  const profile::WorkSpan& ws = p.workspan();

  // Sites by the address they are keyed by: a spawn point, or a call instruction.
  std::map<AddressKey, int> address_ids;
  std::vector<std::vector<uint32_t>> spawn_sites_at, call_sites_at;
  for (int s = 0; s < ws.call_sites_size(); ++s) {
    const profile::CallSite& c = ws.call_sites(s);
    const bool spawn = c.kind() == wire::WORKSPAN_SPAWN;
    // Calls of profiles written before call sites were call instructions (no callee)
    // named the callee's scope, which no tree address matches.
    if (!spawn && (c.kind() != wire::WORKSPAN_CALL || c.callee_location() == 0)) continue;
    const auto address = AddressOf(p, c.location());
    if (!address) continue;
    const int id = address_ids.emplace(*address, static_cast<int>(address_ids.size())).first->second;
    if (static_cast<size_t>(id) >= spawn_sites_at.size()) {
      spawn_sites_at.resize(id + 1);
      call_sites_at.resize(id + 1);
    }
    (spawn ? spawn_sites_at : call_sites_at)[id].push_back(static_cast<uint32_t>(s));
  }

  // Per location (there are far fewer than nodes) its address id, -1 when no site's.
  const auto location_count = static_cast<size_t>(p.locations_size());
  std::vector<int> location_address(location_count, -1);
  for (size_t l = 1; l < location_count; ++l) {
    if (auto address = AddressOf(p, static_cast<uint32_t>(l))) {
      auto it = address_ids.find(*address);
      if (it != address_ids.end()) location_address[l] = it->second;
    }
  }

  result.offsets_.assign(node_count + 1, 0);
  for (uint32_t n = 1; n < node_count; ++n) {
    // A node's parent frame is stopped at the instruction that led to it: the spawn
    // point for a spawned strand (or the creation point of an OpenMP task, which the
    // work/span tables key like a spawn point), else the call instruction of the call
    // it is in.
    const size_t parent = nodes.parent(n);
    int address = -1;
    // A lock leaf is no callee: the call sites of its parent's address are not its.
    if (parent != 0 && nodes.code(parent) && !nodes.lock(n)) {
      const uint32_t location = nodes.location(parent);
      if (location != 0 && location < location_count) address = location_address[location];
    }
    if (address >= 0) {
      const auto& sites = nodes.edge(n) != Edge::kCall ? spawn_sites_at[address] : call_sites_at[address];
      result.ids_.insert(result.ids_.end(), sites.begin(), sites.end());
    }
    result.offsets_[n + 1] = static_cast<uint32_t>(result.ids_.size());
  }
  return result;
}

std::optional<CallSiteCell> CellOf(const CallSiteTable& table, std::span<const uint32_t> sites) {
  CallSiteCell cell;
  bool any = false;
  for (uint32_t s : sites) {
    if (s >= table.sites.size()) continue;
    const CallSiteFigures& f = table.sites[s];
    cell.work += f.work_on_work;
    cell.span += f.span_on_work;
    cell.span_on_span += f.span_on_span;
    cell.count += f.count;
    any = true;
  }
  if (!any) return std::nullopt;
  if (cell.span > 0) cell.parallelism = cell.work / cell.span;
  cell.span_percent = table.program_span > 0 ? 100.0 * cell.span_on_span / table.program_span : 0.0;
  return cell;
}

}  // namespace cilkprof::views
