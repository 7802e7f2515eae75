// Joining the work/span call-site table to the address-level tree (callsite_columns.h).
#include "cilkprof/views/callsite_columns.h"
#include "cilkprof/views/workspan.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

namespace cilkprof::views {
namespace {

// A code address independent of how the profile interned it.
using AddressKey = std::tuple<std::string, std::string, uint64_t>;  // module path, build-id, offset
// A physical function: the outermost frame of a location.
using FunctionKey = std::tuple<std::string, std::string, std::string, uint32_t>;  // module, name, file, line

bool ValidLocation(const profile::Profile& p, uint32_t location) {
  return location > 0 && location < static_cast<uint32_t>(p.locations_size());
}

const profile::Module* ModuleOf(const profile::Profile& p, const profile::Location& location) {
  if (location.module() == 0 || location.module() >= static_cast<uint32_t>(p.modules_size())) return nullptr;
  return &p.modules(static_cast<int>(location.module()));
}

std::optional<AddressKey> AddressOf(const profile::Profile& p, uint32_t location) {
  if (!ValidLocation(p, location)) return std::nullopt;
  const profile::Location& l = p.locations(static_cast<int>(location));
  const profile::Module* module = ModuleOf(p, l);
  return AddressKey{module ? module->path() : "", module ? module->build_id() : "", l.offset()};
}

std::optional<FunctionKey> FunctionOf(const profile::Profile& p, uint32_t location) {
  if (!ValidLocation(p, location)) return std::nullopt;
  const profile::Location& l = p.locations(static_cast<int>(location));
  if (l.frames_size() == 0) return std::nullopt;
  const profile::SourceFrame& outer = l.frames(0);
  // Unknown code has no function to compare: "??" would match every unknown address.
  if (outer.function().empty() || outer.function() == "??") return std::nullopt;
  const profile::Module* module = ModuleOf(p, l);
  return FunctionKey{module ? module->path() : "", outer.function(), outer.function_file(), outer.function_line()};
}


// The enclosing Cilk context a call site names in parent_location.
struct Context {
  enum Kind { kRoot, kSpawnPoint, kScopeFunction } kind = kRoot;
  int id = -1;  // interned spawn-point address or function
  bool operator<(const Context& o) const { return std::tie(kind, id) < std::tie(o.kind, o.id); }
};

// Small interning of keys into dense ids.
template <typename Key>
class Interner {
 public:
  int Id(const Key& key) { return ids_.emplace(key, static_cast<int>(ids_.size())).first->second; }
  int Find(const Key& key) const {
    auto it = ids_.find(key);
    return it == ids_.end() ? -1 : it->second;
  }

 private:
  std::map<Key, int> ids_;
};

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

  Interner<AddressKey> addresses;
  Interner<FunctionKey> functions;
  // Spawn sites by spawn point; the spawn points name spawn contexts.
  std::map<int, std::vector<uint32_t>> spawn_sites_at;
  for (int s = 0; s < ws.call_sites_size(); ++s) {
    const profile::CallSite& c = ws.call_sites(s);
    if (c.kind() != wire::WORKSPAN_SPAWN) continue;
    if (auto address = AddressOf(p, c.location())) {
      spawn_sites_at[addresses.Id(*address)].push_back(static_cast<uint32_t>(s));
    }
  }
  // Call sites by callee function, then by the context they were entered from.
  std::map<int, std::map<Context, std::vector<uint32_t>>> call_sites_of;
  for (int s = 0; s < ws.call_sites_size(); ++s) {
    const profile::CallSite& c = ws.call_sites(s);
    if (c.kind() != wire::WORKSPAN_CALL) continue;
    const auto callee = FunctionOf(p, c.location());
    if (!callee) continue;
    Context context;
    if (c.parent_location() != 0) {
      const auto address = AddressOf(p, c.parent_location());
      const int spawn_point = address ? addresses.Find(*address) : -1;
      if (spawn_point >= 0 && spawn_sites_at.count(spawn_point) > 0) {
        context = {Context::kSpawnPoint, spawn_point};
      } else if (auto function = FunctionOf(p, c.parent_location())) {
        context = {Context::kScopeFunction, functions.Id(*function)};
      } else {
        continue;  // an enclosing context that cannot be recognised in the tree
      }
    }
    call_sites_of[functions.Id(*callee)][context].push_back(static_cast<uint32_t>(s));
  }

  // Per location (there are far fewer than nodes): its interned address and function
  // (-1 when unknown or not a site's); then per node by its location.
  const auto location_count = static_cast<size_t>(p.locations_size());
  std::vector<int> location_address(location_count, -1), location_function(location_count, -1);
  for (size_t l = 1; l < location_count; ++l) {
    if (auto address = AddressOf(p, static_cast<uint32_t>(l))) location_address[l] = addresses.Find(*address);
    if (auto function = FunctionOf(p, static_cast<uint32_t>(l))) location_function[l] = functions.Find(*function);
  }
  std::vector<int> address_of(node_count, -1), function_of(node_count, -1);
  for (uint32_t i = 1; i < node_count; ++i) {
    const uint32_t location = nodes.location(i);
    if (!nodes.code(i) || location == 0 || location >= location_count) continue;
    address_of[i] = location_address[location];
    function_of[i] = location_function[location];
  }
  auto holds_scope = [&](size_t node) {
    return function_of[node] >= 0 && call_sites_of.count(function_of[node]) > 0;
  };

  // up[x]: the first Cilk context met walking up from node x: a spawn edge (definite),
  // a frame of a function holding a scope (possible: `via` is that frame), or the root.
  struct Up {
    Context context;
    size_t via = 0;  // the frame, for kScopeFunction: the walk resumes above it
  };
  std::vector<Up> up(node_count);
  for (uint32_t x = 1; x < node_count; ++x) {
    const size_t parent = nodes.parent(x);
    if (nodes.edge(x) == Edge::kSpawn && parent != 0) {
      up[x] = {{Context::kSpawnPoint, address_of[parent]}, parent};
    } else if (parent == 0) {
      up[x] = {{Context::kRoot, -1}, 0};
    } else if (holds_scope(parent)) {
      up[x] = {{Context::kScopeFunction, function_of[parent]}, parent};
    } else {
      up[x] = up[parent];
    }
  }

  result.offsets_.assign(node_count + 1, 0);
  std::vector<uint32_t> sites;
  for (uint32_t n = 1; n < node_count; ++n) {
    sites.clear();
    const size_t parent = nodes.parent(n);
    // A spawned strand hangs under its spawn point.
    if (nodes.edge(n) == Edge::kSpawn && parent != 0 && address_of[parent] >= 0) {
      auto it = spawn_sites_at.find(address_of[parent]);
      if (it != spawn_sites_at.end()) sites.insert(sites.end(), it->second.begin(), it->second.end());
    }
    // A scope held by this node's function, entered from the nearest context named.
    // A spawned strand that got its spawn site skips the scope its function enters
    // directly: that invocation lies inside the spawned child's, so adding both would
    // count it twice (parallel_for_range spawning itself).
    if (holds_scope(n) && sites.empty()) {
      const auto& by_context = call_sites_of.at(function_of[n]);
      for (Up at = up[n];;) {
        auto it = at.context.id >= 0 || at.context.kind == Context::kRoot ? by_context.find(at.context)
                                                                            : by_context.end();
        if (it != by_context.end()) {
          sites.insert(sites.end(), it->second.begin(), it->second.end());
          break;
        }
        // Only a frame holding a scope is uncertain (that scope may have been closed
        // when it called); a spawn edge and the root end the walk.
        if (at.context.kind != Context::kScopeFunction) break;
        at = up[at.via];
      }
    }
    std::sort(sites.begin(), sites.end());
    sites.erase(std::unique(sites.begin(), sites.end()), sites.end());
    result.ids_.insert(result.ids_.end(), sites.begin(), sites.end());
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
