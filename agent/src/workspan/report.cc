#include "workspan/report.h"

#include <cmath>
#include <map>
#include <utility>

#include "proto_writer.h"

namespace cilkprof::agent::workspan {
namespace {

// wire.proto field numbers.
constexpr uint32_t kAgentMessageDelta = 2;
constexpr uint32_t kDeltaWorkSpan = 16;
enum WorkSpanDeltaField : uint32_t {
  kClock = 1, kUnit = 2, kBurden = 3, kModules = 4, kSites = 5, kWork = 6, kSpan = 7, kBurdenedSpan = 8,
  kSpawns = 9, kSyncs = 10, kComputations = 11, kRegions = 12, kWhatIfSpan = 13, kWhatIfFactorList = 14,
  kRegionsDropped = 15, kSitesDropped = 16, kIncomplete = 17, kModel = 18, kTasksWithDependences = 19,
};
enum ModuleField : uint32_t { kModuleIndex = 1, kModulePath = 2, kModuleBuildId = 3 };
enum LocationField : uint32_t { kLocModule = 1, kLocOffset = 2 };
enum SiteField : uint32_t {
  kSiteId = 1, kSiteKind = 2, kSiteLocation = 3, kSiteParent = 4, kSiteCallee = 5, kSiteCount = 6,
  kSiteWorkOnWork = 7, kSiteSpanOnWork = 8, kSiteWorkOnSpan = 9, kSiteSpanOnSpan = 10, kSiteBurdenedSpanOnWork = 11,
  kSiteStartPoint = 12, kSiteEndPoint = 13,
};

std::string Frame(const ProtoWriter& message) {
  const std::string& body = message.bytes();
  std::string frame;
  const uint32_t n = static_cast<uint32_t>(body.size());
  for (int b = 0; b < 4; ++b) frame.push_back(static_cast<char>((n >> (8 * b)) & 0xff));
  frame += body;
  return frame;
}

}  // namespace

uint64_t Reporter::Units(uint64_t ticks) const {
  if (units_.unit_per_tick == 1.0) return ticks;
  return static_cast<uint64_t>(std::llround(static_cast<double>(ticks) * units_.unit_per_tick));
}

void Reporter::ForgetSent(const Snapshot& s) {
  sent_.resize(s.sites.size());
  for (size_t i = 0; i < s.sites.size(); ++i) {
    const SiteTotals& t = s.sites[i];
    SentSite& d = sent_[i];
    d.count = t.count;
    d.wow = t.work_on_work;
    d.sow = t.span_on_work;
    d.wos = t.work_on_span;
    d.sos = t.span_on_span;
    d.bsow = t.burdened_span_on_work;
    d.defined = false;  // the child's connection has not seen it
    d.callee_sent = false;
  }
  sent_program_ = s.program;
  header_sent_ = false;
}

std::string Reporter::NextFrame(const Snapshot& s, bool incomplete) {
  if (sent_.size() < s.sites.size()) sent_.resize(s.sites.size());
  modules_.BeginCycle();

  // Module indexes local to this message (1-based; 0 = no module).
  std::map<std::pair<std::string, std::string>, uint32_t> module_index;
  ProtoWriter modules_out;
  auto location = [&](uintptr_t pc) {
    ProtoWriter loc;
    // Return addresses: -1 lands inside the call instruction (its line).
    const uintptr_t address = pc - 1;
    modules_.Resolve(address);  // refreshes the table when the pc is in no known module
    const ModuleInfo* m = modules_.Find(address);
    if (m == nullptr) {
      loc.Varint(kLocOffset, address);
      return loc;
    }
    auto key = std::make_pair(m->path, m->build_id);
    auto it = module_index.find(key);
    if (it == module_index.end()) {
      const uint32_t index = static_cast<uint32_t>(module_index.size() + 1);
      it = module_index.emplace(key, index).first;
      ProtoWriter mod;
      mod.Varint(kModuleIndex, index);
      mod.String(kModulePath, m->path);
      mod.String(kModuleBuildId, m->build_id);
      modules_out.Message(kModules, mod);
    }
    loc.Varint(kLocModule, it->second);
    loc.Varint(kLocOffset, address - m->load_bias);
    return loc;
  };

  ProtoWriter sites_out;
  bool any = false;
  for (size_t i = 0; i < s.sites.size(); ++i) {
    const SiteTotals& t = s.sites[i];
    if (t.pc == 0) continue;  // not published yet
    SentSite& d = sent_[i];
    const bool send_callee = !d.callee_sent && t.callee_pc != 0;
    const bool changed = !d.defined || send_callee || t.count != d.count || t.work_on_work != d.wow ||
                         t.span_on_work != d.sow || t.work_on_span != d.wos || t.span_on_span != d.sos ||
                         t.burdened_span_on_work != d.bsow;
    if (!changed) continue;
    ProtoWriter site;
    site.Varint(kSiteId, i + 1);
    if (!d.defined) {
      // WORKSPAN_CALL = 1, WORKSPAN_SPAWN = 2, WORKSPAN_STRAND = 3
      site.Varint(kSiteKind, static_cast<uint32_t>(t.kind) + 1);
      site.Message(kSiteLocation, location(t.pc));
      if (t.parent_pc != 0) site.Message(kSiteParent, location(t.parent_pc));
      if (t.kind == SiteKind::kStrand) {  // wire.proto WorkSpanStrandPoint has the same values
        site.Varint(kSiteStartPoint, static_cast<uint32_t>(t.start));
        site.Varint(kSiteEndPoint, static_cast<uint32_t>(t.end));
      }
    }
    if (send_callee) site.Message(kSiteCallee, location(t.callee_pc));
    site.Varint(kSiteCount, t.count - d.count);
    site.Varint(kSiteWorkOnWork, Units(t.work_on_work) - Units(d.wow));
    site.Varint(kSiteSpanOnWork, Units(t.span_on_work) - Units(d.sow));
    site.Varint(kSiteWorkOnSpan, Units(t.work_on_span) - Units(d.wos));
    site.Varint(kSiteSpanOnSpan, Units(t.span_on_span) - Units(d.sos));
    site.Varint(kSiteBurdenedSpanOnWork, Units(t.burdened_span_on_work) - Units(d.bsow));
    sites_out.Message(kSites, site);
    d.defined = true;
    d.callee_sent = d.callee_sent || send_callee;
    d.count = t.count;
    d.wow = t.work_on_work;
    d.sow = t.span_on_work;
    d.wos = t.work_on_span;
    d.sos = t.span_on_span;
    d.bsow = t.burdened_span_on_work;
    any = true;
  }

  const ProgramTotals& p = s.program;
  const ProgramTotals& q = sent_program_;
  bool whatif_changed = false;
  for (int v = 0; v < kVariants; ++v) whatif_changed = whatif_changed || p.whatif_span[v] != q.whatif_span[v];
  const bool program_changed = p.work != q.work || p.span != q.span || p.burdened_span != q.burdened_span ||
                               p.spawns != q.spawns || p.syncs != q.syncs || p.computations != q.computations ||
                               p.regions.size() != q.regions.size() || p.regions_dropped != q.regions_dropped ||
                               p.sites_dropped != q.sites_dropped ||
                               p.tasks_with_dependences != q.tasks_with_dependences || whatif_changed;
  const bool incomplete_news = incomplete && !incomplete_sent_;
  if (!any && !program_changed && header_sent_ && !incomplete_news) return std::string();

  ProtoWriter ws;
  ws.String(kClock, units_.clock);
  ws.String(kUnit, units_.unit);
  ws.Varint(kBurden, Units(units_.burden_ticks));
  ws.mutable_bytes() += modules_out.bytes();
  ws.mutable_bytes() += sites_out.bytes();
  ws.Varint(kWork, Units(p.work) - Units(q.work));
  ws.Varint(kSpan, Units(p.span) - Units(q.span));
  ws.Varint(kBurdenedSpan, Units(p.burdened_span) - Units(q.burdened_span));
  ws.Varint(kSpawns, p.spawns - q.spawns);
  ws.Varint(kSyncs, p.syncs - q.syncs);
  ws.Varint(kComputations, p.computations - q.computations);
  for (const std::string& r : p.regions) ws.RepeatedString(kRegions, r);
  double whatif[kVariants];
  for (int v = 0; v < kVariants; ++v) {
    whatif[v] = (p.whatif_span[v] - q.whatif_span[v]) * units_.unit_per_tick;
  }
  if (whatif_changed) ws.PackedDoubles(kWhatIfSpan, whatif, kVariants);
  {
    // packed uint32: the factors, fixed
    ProtoWriter packed;
    std::string& bytes = packed.mutable_bytes();
    for (int f = 0; f < kFactorCount; ++f) bytes.push_back(static_cast<char>(kWhatIfFactors[f]));
    ws.RepeatedString(kWhatIfFactorList, bytes);
  }
  ws.Varint(kRegionsDropped, p.regions_dropped - q.regions_dropped);
  ws.Varint(kSitesDropped, p.sites_dropped - q.sites_dropped);
  ws.Bool(kIncomplete, incomplete);
  if (!units_.model.empty()) ws.String(kModel, units_.model);
  ws.Varint(kTasksWithDependences, p.tasks_with_dependences - q.tasks_with_dependences);

  ProtoWriter delta;
  delta.Message(kDeltaWorkSpan, ws);
  ProtoWriter message;
  message.Message(kAgentMessageDelta, delta);
  sent_program_ = p;
  header_sent_ = true;
  incomplete_sent_ = incomplete_sent_ || incomplete;
  return Frame(message);
}

}  // namespace cilkprof::agent::workspan
