// The locks view (see locks.h).
#include "cilkprof/views/locks.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <regex>

#include "cilkprof/views/text_table.h"
#include "cilkprof/views/units.h"

namespace cilkprof::views {
namespace {

using Json = nlohmann::ordered_json;

// How many user frames a context shows: the critical section's function and two
// callers tell which code path took the lock.
constexpr size_t kContextFrames = 3;

constexpr const char* kNoLocks =
    "has no lock data: no thread waited for a pthread mutex, rwlock or spinlock while it was profiled "
    "(a lock never contended is not recorded; profiles from before lock blame have none); "
    "profile a run whose threads contend for locks with `cilkprof run`";

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool StartsWith(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

// Frames of the lock's own code, not the user's: the pthread and C++ lock wrappers
// (inlined into the caller or in the C and C++ runtimes), the Cilk library's templates,
// and the agent's interposed functions.
bool IsLockLibraryFrame(const std::string& function, const std::string& module) {
  const std::string base = Basename(module);
  for (const char* library : {"libc.so", "libpthread.so", "libstdc++.so", "libgcc_s.so", "ld-linux", "libcilkprof"}) {
    if (StartsWith(base, library)) return true;
  }
  for (const char* prefix : {"std::", "__gnu_cxx::", "__gthread", "pthread_", "__pthread", "___pthread", "__GI_",
                             "__lll_", "lll_", "cilk::", "void cilk::", "void std::"}) {
    if (StartsWith(function, prefix)) return true;
  }
  return false;
}

std::string FrameText(const profile::SourceFrame& frame) {
  const std::string function = frame.function().empty() ? "??" : frame.function();
  if (frame.file().empty()) return function;
  return function + " (" + Basename(frame.file()) + ":" + (frame.line() ? std::to_string(frame.line()) : "?") + ")";
}

// The context of a lock node: its innermost user frames, walking up the address nodes
// above it (innermost frame of each first) until a partial-unwind marker.
LockContext ContextOf(const profile::Profile& p, const ProfileNodes& nodes, uint32_t lock_node) {
  LockContext context;
  std::vector<const profile::SourceFrame*> user;
  const profile::SourceFrame* innermost = nullptr;
  for (uint32_t n = nodes.parent(lock_node); n != 0 && user.size() < kContextFrames; n = nodes.parent(n)) {
    if (nodes.partial_unwind(n)) break;
    if (!nodes.code(n)) continue;  // elided frames: the outer ones follow
    const uint32_t location = nodes.location(n);
    if (location == 0 || location >= static_cast<uint32_t>(p.locations_size())) continue;
    const profile::Location& l = p.locations(static_cast<int>(location));
    const std::string& module = l.module() < static_cast<uint32_t>(p.modules_size())
                                    ? p.modules(static_cast<int>(l.module())).path()
                                    : std::string();
    for (int f = l.frames_size() - 1; f >= 0 && user.size() < kContextFrames; --f) {
      const profile::SourceFrame& frame = l.frames(f);
      if (innermost == nullptr) innermost = &frame;
      if (!IsLockLibraryFrame(frame.function(), module)) user.push_back(&frame);
    }
  }
  // Nothing but library frames: show the innermost one rather than nothing.
  if (user.empty() && innermost != nullptr) user.push_back(innermost);
  if (user.empty()) {
    context.function = "??";
    context.frames = "??";
    return context;
  }
  context.function = user.front()->function().empty() ? "??" : user.front()->function();
  context.file = user.front()->file();
  context.line = user.front()->line();
  for (size_t i = 0; i < user.size(); ++i) context.frames += (i ? " <- " : "") + FrameText(*user[i]);
  return context;
}

const char* KindName(wire::LockKind kind) {
  switch (kind) {
    case wire::LOCK_RWLOCK: return "rwlock";
    case wire::LOCK_SPIN: return "spin";
    case wire::LOCK_OMP_LOCK: return "omp_lock";
    case wire::LOCK_OMP_NEST_LOCK: return "omp_nest_lock";
    case wire::LOCK_OMP_CRITICAL: return "omp critical";
    default: return "mutex";
  }
}

int MetricIndex(const profile::Profile& p, const char* name) {
  for (int m = 0; m < p.metrics_size(); ++m) {
    if (p.metrics(m).name() == name) return m;
  }
  return -1;
}

// Merged by what they show, largest first, shares of their sum.
std::vector<LockContext> Ranked(std::map<std::string, LockContext>& by_frames) {
  std::vector<LockContext> out;
  double total = 0;
  for (auto& [frames, context] : by_frames) {
    if (context.value <= 0) continue;
    total += context.value;
    out.push_back(std::move(context));
  }
  for (LockContext& c : out) c.share = total > 0 ? c.value / total : 0;
  std::stable_sort(out.begin(), out.end(), [](const LockContext& a, const LockContext& b) { return a.value > b.value; });
  return out;
}

std::string Fixed1Percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", 100.0 * fraction);
  return buffer;
}

std::string LockPlace(const LockRow& r) {
  return r.file.empty() ? "??" : Basename(r.file) + ":" + (r.line ? std::to_string(r.line) : "?");
}

Json ContextsJson(const std::vector<LockContext>& contexts) {
  Json out = Json::array();
  for (const LockContext& c : contexts) {
    out.push_back({{"function", c.function}, {"file", c.file}, {"line", c.line}, {"frames", c.frames},
                   {"value_ns", c.value}, {"percent", 100.0 * c.share}});
  }
  return out;
}

}  // namespace

LockIdentity LockIdentityOf(const profile::Profile& p, uint32_t location) {
  LockIdentity identity;
  if (location == 0 || location >= static_cast<uint32_t>(p.locations_size())) {
    identity.name = "??";
    return identity;
  }
  const profile::Location& l = p.locations(static_cast<int>(location));
  if (l.frames_size() > 0) {
    const profile::SourceFrame& f = l.frames(0);
    const std::string& name = f.function();
    if (!name.empty() && name != "??") {
      identity.name = name;
      // Addresses the symbolizer could not name: "0x7f...", "libfoo.so+0x4020".
      const std::string module = l.module() < static_cast<uint32_t>(p.modules_size())
                                     ? Basename(p.modules(static_cast<int>(l.module())).path())
                                     : std::string();
      identity.named = !StartsWith(name, "0x") && (module.empty() || !StartsWith(name, (module + "+0x").c_str()));
    }
    identity.file = f.file().empty() ? f.function_file() : f.file();
    identity.line = f.file().empty() ? f.function_line() : f.line();
  }
  if (identity.name.empty()) {
    char address[32];
    std::snprintf(address, sizeof address, "0x%" PRIx64, l.offset());
    const bool in_module = l.module() != 0 && l.module() < static_cast<uint32_t>(p.modules_size());
    identity.name = in_module ? Basename(p.modules(static_cast<int>(l.module())).path()) + "+" + address : address;
  }
  return identity;
}

std::string LockRowName(const std::string& name) { return kLockRowPrefix + name + "]"; }

Result<std::vector<LockRow>> LockRows(const profile::Profile& p) { return LockRows(p, ProfileNodes::Of(p)); }

Result<std::vector<LockRow>> LockRows(const profile::Profile& p, const ProfileNodes& nodes) {
  if (p.locks_size() == 0) return Status::Error(kNoLocks);
  std::vector<LockRow> rows;
  std::map<uint32_t, size_t> row_of_location;
  double total_wait = 0;
  for (const profile::Lock& lock : p.locks()) {
    auto [it, fresh] = row_of_location.emplace(lock.location(), rows.size());
    if (fresh) {
      rows.emplace_back();
      rows.back().identity = LockIdentityOf(p, lock.location());
      rows.back().kind = KindName(lock.kind());
    }
    LockRow& row = rows[it->second];
    row.contended += lock.contended();
    row.timeouts += lock.timeouts();
    row.acquisitions += lock.acquisitions();
    row.wait_ns += static_cast<double>(lock.wait_ns());
    row.blame_ns += static_cast<double>(lock.blame_ns());
    total_wait += static_cast<double>(lock.wait_ns());
  }

  // The contexts: FRAME_LOCK nodes of each lock, by lock_blame (holders) and lock_wait.
  const int wait_metric = MetricIndex(p, kLockWaitMetric), blame_metric = MetricIndex(p, kLockBlameMetric);
  std::vector<std::map<std::string, LockContext>> holders(rows.size()), waiters(rows.size());
  const size_t metric_count = static_cast<size_t>(p.metrics_size());
  std::vector<double> values(metric_count);
  for (uint32_t n = 1; n < nodes.size(); ++n) {
    if (!nodes.lock(n)) continue;
    auto it = row_of_location.find(nodes.location(n));
    if (it == row_of_location.end()) continue;  // a lock without totals: the top-down view shows it
    nodes.Exclusive(n, metric_count, values.data());
    const double wait = wait_metric >= 0 ? values[static_cast<size_t>(wait_metric)] : 0;
    const double blame = blame_metric >= 0 ? values[static_cast<size_t>(blame_metric)] : 0;
    if (wait <= 0 && blame <= 0) continue;
    const LockContext context = ContextOf(p, nodes, n);
    for (auto [map, value] : {std::pair{&holders[it->second], blame}, std::pair{&waiters[it->second], wait}}) {
      if (value <= 0) continue;
      LockContext& c = map->try_emplace(context.frames, context).first->second;
      c.value += value;
    }
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    LockRow& row = rows[r];
    row.holders = Ranked(holders[r]);
    row.waiters = Ranked(waiters[r]);
    row.blame_share = row.wait_ns > 0 ? row.blame_ns / row.wait_ns : 0;
    row.wait_share = total_wait > 0 ? row.wait_ns / total_wait : 0;
    // Where to find it: its declaration, else where it was waited for most.
    row.file = row.identity.file;
    row.line = row.identity.line;
    if (row.file.empty() && !row.waiters.empty()) {
      row.file = row.waiters.front().file;
      row.line = row.waiters.front().line;
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const LockRow& a, const LockRow& b) {
    if (a.wait_ns != b.wait_ns) return a.wait_ns > b.wait_ns;
    return a.identity.name < b.identity.name;
  });
  return rows;
}

Status FocusLocks(std::vector<LockRow>* rows, const std::string& regex) {
  std::regex pattern;
  try {
    pattern = std::regex(regex, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Status::Error("--focus '" + regex + "' is not a valid regular expression: " + e.what());
  }
  auto matches = [&](const LockRow& row) {
    if (std::regex_search(row.identity.name, pattern)) return true;
    for (const auto* contexts : {&row.holders, &row.waiters}) {
      for (const LockContext& c : *contexts) {
        if (std::regex_search(c.frames, pattern)) return true;
      }
    }
    return false;
  };
  std::erase_if(*rows, [&](const LockRow& row) { return !matches(row); });
  if (rows->empty()) {
    return Status::Error("--focus '" + regex +
                         "': no lock's name or holder or waiter context matches (see the names in 'cilkprof view "
                         "locks' without --focus)");
  }
  return Status::Ok();
}

void ThresholdLocks(std::vector<LockRow>* rows, double percent) {
  if (percent <= 0) return;
  // A lock exactly at the threshold stays, even when the share rounds down a little.
  std::erase_if(*rows, [&](const LockRow& row) { return 100.0 * row.wait_share < percent * (1 - 1e-9); });
}

std::string RenderLocksText(const std::vector<LockRow>& rows, size_t contexts) {
  double largest = 0;
  for (const LockRow& r : rows) largest = std::max({largest, r.wait_ns, r.blame_ns});
  const Scale scale = ChooseScale("ns", largest);
  const std::string suffix = scale.suffix.empty() ? "" : " (" + scale.suffix + ")";
  std::vector<TextColumn> columns = {{"wait" + suffix, false, {}}, {"wait %", false, {}},
                                     {"blame" + suffix, false, {}}, {"blame/wait", false, {}},
                                     {"acquisitions", false, {}},   {"contended", false, {}},
                                     {"timeouts", false, {}},       {"kind", true, {}},
                                     {"lock", true, {}},            {"file:line", true, {}}};
  for (const LockRow& r : rows) {
    columns[0].cells.push_back(FormatScaled(r.wait_ns, scale));
    columns[1].cells.push_back(Fixed1Percent(r.wait_share));
    columns[2].cells.push_back(FormatScaled(r.blame_ns, scale));
    columns[3].cells.push_back(r.wait_ns > 0 ? Fixed1Percent(r.blame_share) : "-");
    // Estimated (sampled), hence "~"; "-" for profiles recorded before the estimate.
    columns[4].cells.push_back(r.acquisitions > 0 ? "~" + std::to_string(r.acquisitions) : "-");
    columns[5].cells.push_back(std::to_string(r.contended));
    columns[6].cells.push_back(std::to_string(r.timeouts));
    columns[7].cells.push_back(r.kind);
    columns[8].cells.push_back(r.identity.name);
    columns[9].cells.push_back(LockPlace(r));
  }
  std::string out = RenderTextTable(columns);
  if (rows.empty()) {
    out += "(no lock above the threshold; --threshold 0 shows all)\n";
    return out;
  }
  // Each lock's contexts: who held it up (blame), who waited (wait).
  auto list = [&](const char* what, const std::vector<LockContext>& list) {
    out += std::string("  ") + what + "\n";
    if (list.empty()) out += "    (none sampled)\n";
    for (size_t i = 0; i < list.size() && i < contexts; ++i) {
      std::string share = Fixed1Percent(list[i].share);
      out += "    " + std::string(6 - std::min<size_t>(6, share.size()), ' ') + share + "  " +
             FormatDuration(list[i].value / 1e9) + "  " + list[i].frames + "\n";
    }
    if (list.size() > contexts) out += "    ... " + std::to_string(list.size() - contexts) + " more (--format json lists all)\n";
  };
  for (const LockRow& r : rows) {
    out += "\n" + r.identity.name + " (" + r.kind + ", " + LockPlace(r) + "):\n";
    list("holders, by blame (the critical sections that made the others wait):", r.holders);
    list("waiters, by wait:", r.waiters);
  }
  return out;
}

std::string RenderLocksJson(const std::vector<LockRow>& rows) {
  Json out = Json::array();
  for (const LockRow& r : rows) {
    Json o;
    o["lock"] = r.identity.name;
    o["file"] = r.file;
    o["line"] = r.line;
    o["named"] = r.identity.named;
    o["kind"] = r.kind;
    o["contended"] = r.contended;
    o["wait_ns"] = r.wait_ns;
    o["blame_ns"] = r.blame_ns;
    o["blame_percent"] = 100.0 * r.blame_share;
    o["wait_percent"] = 100.0 * r.wait_share;
    o["timeouts"] = r.timeouts;
    o["acquisitions"] = r.acquisitions;
    o["holders"] = ContextsJson(r.holders);
    o["waiters"] = ContextsJson(r.waiters);
    out.push_back(std::move(o));
  }
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string RenderLocksCsv(const std::vector<LockRow>& rows) {
  std::string out =
      "lock,file,line,kind,contended,wait_ns,blame_ns,blame_percent,timeouts,top_holder,top_holder_blame_ns,"
      "top_waiter,top_waiter_wait_ns,acquisitions\n";
  for (const LockRow& r : rows) {
    const LockContext none;
    const LockContext& holder = r.holders.empty() ? none : r.holders.front();
    const LockContext& waiter = r.waiters.empty() ? none : r.waiters.front();
    out += CsvField(r.identity.name) + "," + CsvField(r.file) + "," + std::to_string(r.line) + "," + r.kind + "," +
           std::to_string(r.contended) + "," + FormatExact(r.wait_ns) + "," + FormatExact(r.blame_ns) + "," +
           FormatExact(100.0 * r.blame_share) + "," + std::to_string(r.timeouts) + "," + CsvField(holder.frames) +
           "," + FormatExact(holder.value) + "," + CsvField(waiter.frames) + "," + FormatExact(waiter.value) + "," +
           std::to_string(r.acquisitions) + "\n";
  }
  return out;
}

}  // namespace cilkprof::views
