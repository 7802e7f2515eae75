#include "sp_program.h"

#include <cilk/cilk.hpp>
#include <cilkprof/cilkprof.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <random>

namespace workspan_test {

thread_local uintptr_t t_next_site = 0;
thread_local uintptr_t t_next_caller = 0;
thread_local uintptr_t t_next_callable = 0;

std::string RegionName(int index) { return "r" + std::to_string(index); }

// ---------------------------------------------------------------------------------
// Generator.

namespace {

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  Program Make() {
    Program p;
    const int templates = Uniform(2, 4);
    p.templates.resize(templates);
    for (int t = 0; t < templates; ++t) {
      p.templates[t].scope_site = 0x1000 + 0x10 * t;
      p.templates[t].function = 0x400000 + 0x10 * t;
    }
    for (int t = 0; t < templates; ++t) {
      Template& tp = p.templates[t];
      // Template 0 is the computation's root: it opens the scope the runtime binds.
      tp.has_scope = t == 0 || Uniform(0, 99) < 75;
      if (tp.has_scope) {
        // (Not template 0: its top-level call enters the function outside any computation.)
        if (t != 0 && Uniform(0, 99) < 50) tp.pre = Body(templates, /*in_frame=*/false, 2);
        tp.body = Body(templates, /*in_frame=*/true, 0);
      } else {
        tp.pre = Body(templates, /*in_frame=*/false, 0);
      }
    }
    p.budget = Uniform(2, 4);
    p.min_budget = 0;
    return p;
  }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  std::vector<Stmt> Body(int templates, bool in_frame, int nesting) {
    std::vector<Stmt> body;
    const int n = Uniform(1, in_frame ? 6 : 3);
    for (int i = 0; i < n; ++i) {
      const int r = Uniform(0, 99);
      Stmt s;
      if (r < 35) {
        s.kind = Stmt::kCharge;
        s.units = static_cast<uint64_t>(Uniform(0, 15));
      } else if (r < 58) {
        s.kind = Stmt::kCall;
        s.target = Uniform(0, templates - 1);
        s.cost = 1;
        s.units = static_cast<uint64_t>(Uniform(0, 5));
        s.site = 0x500000 + 0x10 * next_call_site_++;
      } else if (r < 80 && in_frame) {
        s.kind = Stmt::kSpawn;
        s.site = 0x200000 + 0x10 * next_spawn_site_++;
        s.direct = Uniform(0, 1) == 1;
        s.body = Body(templates, /*in_frame=*/false, nesting);
      } else if (r < 90 && in_frame) {
        s.kind = Stmt::kSync;
      } else if (nesting < 2) {
        s.kind = Stmt::kRegion;
        s.region = Uniform(0, 2);
        s.body = Body(templates, in_frame, nesting + 1);
      } else {
        s.kind = Stmt::kCharge;
        s.units = static_cast<uint64_t>(Uniform(1, 9));
      }
      body.push_back(std::move(s));
    }
    return body;
  }

  std::mt19937_64 rng_;
  int next_spawn_site_ = 0;
  int next_call_site_ = 0;
};

}  // namespace

Program RandomProgram(uint64_t seed) { return Generator(seed).Make(); }

namespace {
void DumpBody(const std::vector<Stmt>& body, int indent, std::string* out) {
  char line[160];
  for (const Stmt& s : body) {
    const std::string pad(static_cast<size_t>(indent), ' ');
    switch (s.kind) {
      case Stmt::kCharge:
        snprintf(line, sizeof line, "charge %lu\n", static_cast<unsigned long>(s.units));
        break;
      case Stmt::kCall:
        snprintf(line, sizeof line, "call t%d at %#lx (cost %d, else charge %lu)\n", s.target,
                 static_cast<unsigned long>(s.site), s.cost, static_cast<unsigned long>(s.units));
        break;
      case Stmt::kSpawn:
        snprintf(line, sizeof line, "spawn at %#lx%s\n", static_cast<unsigned long>(s.site), s.direct ? " (direct)" : "");
        break;
      case Stmt::kSync:
        snprintf(line, sizeof line, "sync\n");
        break;
      case Stmt::kRegion:
        snprintf(line, sizeof line, "region r%d\n", s.region);
        break;
    }
    *out += pad + line;
    if (s.kind == Stmt::kSpawn || s.kind == Stmt::kRegion) DumpBody(s.body, indent + 2, out);
  }
}
}  // namespace

namespace {
void Reinterpret(std::vector<Stmt>& body) {
  for (Stmt& s : body) {
    if (s.kind == Stmt::kCall) s.site = 0x500000;
    if (s.kind == Stmt::kSpawn) s.direct = false;
    Reinterpret(s.body);
  }
}
}  // namespace

Program AsInterpreted(Program program) {
  for (Template& t : program.templates) {
    Reinterpret(t.pre);
    Reinterpret(t.body);
  }
  return program;
}

std::string Describe(const Program& program) {
  std::string out = "budget " + std::to_string(program.budget) + ", min " + std::to_string(program.min_budget) + "\n";
  for (size_t t = 0; t < program.templates.size(); ++t) {
    const Template& tp = program.templates[t];
    out += "t" + std::to_string(t) + (tp.has_scope ? "" : " (serial)") + ":\n";
    if (!tp.pre.empty()) {
      out += "  before the scope:\n";
      DumpBody(tp.pre, 4, &out);
    }
    if (tp.has_scope) {
      out += "  scope:\n";
      DumpBody(tp.body, 4, &out);
    }
  }
  return out;
}

Program FibProgram(int n) {
  Program p;
  p.templates.resize(1);
  Template& fib = p.templates[0];
  fib.scope_site = 0x1000;
  fib.function = 0x400000;
  Stmt charge;
  charge.kind = Stmt::kCharge;
  charge.units = 1;
  Stmt call_n1;
  call_n1.kind = Stmt::kCall;
  call_n1.target = 0;
  call_n1.cost = 1;
  call_n1.units = 1;
  call_n1.site = 0x500000;
  Stmt spawn;
  spawn.kind = Stmt::kSpawn;
  spawn.site = 0x2000;
  spawn.direct = true;  // s.spawn([&] { x = fib(n - 1); })
  spawn.body = {call_n1};
  Stmt call_n2 = call_n1;
  call_n2.cost = 2;
  call_n2.site = 0x500010;
  Stmt sync;
  sync.kind = Stmt::kSync;
  fib.body = {charge, spawn, charge, call_n2, sync};
  p.budget = n;
  p.min_budget = 2;
  return p;
}

[[gnu::noinline]] void DirectCallable() { asm volatile("" ::: "memory"); }
uintptr_t DirectCallSite() { return reinterpret_cast<uintptr_t>(&DirectCallable) + 1; }

// ---------------------------------------------------------------------------------
// The interpreter on the runtime.

namespace {

// Not inlined: one scope-entry and one spawn pc per template call, as the reference
// models them (inlined copies would be distinct call sites, as in any program).
// `callable_calls`: the statements are a spawned callable's own, so its calls report
// a call site inside DirectCallable (a direct spawn) or their own site.
[[gnu::noinline]] void ExecBody(const Program& p, const std::vector<Stmt>& body, int budget, cilk::scope* scope,
                                bool callable_calls);

FunctionHooks g_functions;  // function mode when set; one program runs at a time

// The made-up callable a spawned child reports in function mode, and its call site.
constexpr uintptr_t kCallableReturn = 0x7000;

bool WaitForThief() {
  static const bool wait = getenv("WORKSPAN_TEST_WAIT_FOR_THIEF") != nullptr;
  return wait;
}

[[gnu::noinline]] void CallTemplate(const Program& p, int t, int budget, uintptr_t caller) {
  const Template& tp = p.templates[t];
  const auto* function = reinterpret_cast<const void*>(tp.function);
  const auto* ret = reinterpret_cast<const void*>(caller);
  if (g_functions.enter != nullptr) g_functions.enter(function, ret);
  ExecBody(p, tp.pre, budget, nullptr, false);
  if (tp.has_scope) {
    t_next_site = tp.scope_site;
    t_next_caller = caller;
    cilk::scope scope;
    ExecBody(p, tp.body, budget, &scope, false);
  }
  if (g_functions.exit != nullptr) g_functions.exit(function, ret);
}

// A spawned child: the callable (in function mode an instrumented one) runs the body.
uintptr_t CallableOf(const Stmt& spawn);

void RunChild(const Program& p, const Stmt& spawn, int budget) {
  const auto* callable = reinterpret_cast<const void*>(CallableOf(spawn));
  const auto* ret = reinterpret_cast<const void*>(kCallableReturn);
  if (g_functions.enter != nullptr) g_functions.enter(callable, ret);
  ExecBody(p, spawn.body, budget, nullptr, /*callable_calls=*/spawn.direct);
  if (g_functions.exit != nullptr) g_functions.exit(callable, ret);
}

uintptr_t CallableOf(const Stmt& spawn) {
  return spawn.direct ? reinterpret_cast<uintptr_t>(&DirectCallable) : 0x600000 + spawn.site;
}

[[gnu::noinline]] void ExecBody(const Program& p, const std::vector<Stmt>& body, int budget, cilk::scope* scope,
                                bool callable_calls) {
  for (const Stmt& s : body) {
    switch (s.kind) {
      case Stmt::kCharge:
        cilkprof_charge(s.units);
        break;
      case Stmt::kCall:
        if (budget - s.cost >= p.min_budget) {
          CallTemplate(p, s.target, budget - s.cost, callable_calls ? DirectCallSite() : s.site);
        } else {
          cilkprof_charge(s.units);
        }
        break;
      case Stmt::kSpawn: {
        t_next_site = s.site;
        t_next_callable = CallableOf(s);
        const Stmt* child = &s;
        if (!WaitForThief()) {
          scope->spawn([&p, child, budget] { RunChild(p, *child, budget); });
          break;
        }
        // Give an idle worker time to steal the continuation while the child runs, so
        // views are split and merged (bounded: the results do not depend on it).
        auto continued = std::make_shared<std::atomic<bool>>(false);
        scope->spawn([&p, child, budget, continued] {
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(60);
          while (!continued->load() && std::chrono::steady_clock::now() < deadline) {
          }
          RunChild(p, *child, budget);
        });
        continued->store(true);
        break;
      }
      case Stmt::kSync:
        scope->sync();
        break;
      case Stmt::kRegion: {
        cilkprof::region region(RegionName(s.region).c_str());
        ExecBody(p, s.body, budget, scope, callable_calls);
        break;
      }
    }
  }
}

}  // namespace

void RunOnRuntime(const Program& program, FunctionHooks functions) {
  g_functions = functions;
  CallTemplate(program, 0, program.budget, program.root_site);
  g_functions = {};
}

// ---------------------------------------------------------------------------------
// The reference: a serial run into an explicit dag.

namespace {

struct Node {
  uint64_t w = 0;
  int region = -1;
  std::vector<int> preds;           // in priority order (ties: the first wins)
  std::vector<uint64_t> edge_burden;  // per pred
};

struct Invocation {
  SiteKey key;
  int parent = -1;
  int begin = 0, end = 0;  // its nodes: [begin, end)
  int entry = 0, exit = 0;
};

class Dag {
 public:
  Dag(const Program& p, uint64_t burden, Mode mode) : p_(p), burden_(burden), mode_(mode) {}

  void Run() {
    int cur = NewNode(-1, {}, {});
    Call(0, p_.budget, cur, -1, -1, p_.root_site, /*spawn_part=*/false, /*root=*/true);
  }

  Expected Measure(int regions, const std::vector<int>& factors) const;

 private:
  int NewNode(int region, std::vector<int> preds, std::vector<uint64_t> burdens) {
    Node n;
    n.region = region;
    n.preds = std::move(preds);
    n.edge_burden = std::move(burdens);
    if (n.edge_burden.empty()) n.edge_burden.assign(n.preds.size(), 0);
    nodes_.push_back(std::move(n));
    return static_cast<int>(nodes_.size()) - 1;
  }

  // An invocation of template t through call site `site`. `spawn_part`: a call the
  // spawned callable makes itself, which has no call site (it is its spawn's). The
  // root call's function is entered outside the computation: only its scope counts.
  void Call(int t, int budget, int& cur, int region, int parent_inv, uintptr_t site, bool spawn_part, bool root) {
    const Template& tp = p_.templates[t];
    const bool whole_function = mode_ == Mode::kFunction && !root;
    int inv = -1;
    int c = cur;
    auto open = [&] {
      if (!spawn_part) {
        inv = static_cast<int>(invs_.size());
        invs_.push_back({SiteKey{0, site, 0}, parent_inv, 0, 0, 0, 0});
      }
      c = NewNode(region, {c}, {});
      if (inv >= 0) invs_[inv].begin = invs_[inv].entry = c;
    };
    if (whole_function) open();
    Body(tp.pre, budget, c, region, inv >= 0 ? inv : parent_inv, nullptr, false);
    if (tp.has_scope) {
      if (!whole_function) open();
      std::vector<int> children;
      Body(tp.body, budget, c, region, inv >= 0 ? inv : parent_inv, &children, false);
      ++syncs_;
      Sync(c, children, region);
    }
    if (inv >= 0) {
      invs_[inv].exit = c;
      invs_[inv].end = static_cast<int>(nodes_.size());
    }
    cur = NewNode(region, {c}, {});
  }

  void Sync(int& cur, std::vector<int>& children, int region) {
    std::vector<int> preds = {cur};
    preds.insert(preds.end(), children.begin(), children.end());
    cur = NewNode(region, std::move(preds), {});
    children.clear();
  }

  void Body(const std::vector<Stmt>& body, int budget, int& cur, int region, int inv, std::vector<int>* children,
            bool callable_calls) {
    for (const Stmt& s : body) {
      switch (s.kind) {
        case Stmt::kCharge:
          nodes_[cur].w += s.units;
          break;
        case Stmt::kCall:
          if (budget - s.cost >= p_.min_budget) {
            Call(s.target, budget - s.cost, cur, region, inv, s.site, callable_calls, false);
          } else {
            nodes_[cur].w += s.units;
          }
          break;
        case Stmt::kSpawn: {
          ++spawns_;
          const int child = static_cast<int>(invs_.size());
          invs_.push_back({SiteKey{1, s.site, 0}, inv, 0, 0, 0, 0});
          int c = NewNode(region, {cur}, {burden_});
          invs_[child].begin = invs_[child].entry = c;
          // The callable's own calls: always with function hooks (the callable is
          // instrumented), else when it makes them itself (a direct spawn).
          Body(s.body, budget, c, region, child, nullptr, mode_ == Mode::kFunction || s.direct);
          invs_[child].exit = c;
          invs_[child].end = static_cast<int>(nodes_.size());
          children->push_back(c);
          cur = NewNode(region, {cur}, {burden_});
          break;
        }
        case Stmt::kSync:
          ++syncs_;
          Sync(cur, *children, region);
          break;
        case Stmt::kRegion: {
          const int inner = region >= 0 ? region : s.region;
          cur = NewNode(inner, {cur}, {});
          Body(s.body, budget, cur, inner, inv, children, callable_calls);
          cur = NewNode(region, {cur}, {});
          break;
        }
      }
    }
  }

  const Program& p_;
  uint64_t burden_;
  Mode mode_;
  std::vector<Node> nodes_;
  std::vector<Invocation> invs_;
  uint64_t spawns_ = 0, syncs_ = 0;
};

Expected Dag::Measure(int regions, const std::vector<int>& factors) const {
  Expected e;
  const int n = static_cast<int>(nodes_.size());
  // Longest paths; nodes are in topological order (preds are always older).
  std::vector<uint64_t> dist(n), bdist(n);
  std::vector<int> via(n, -1);
  for (int i = 0; i < n; ++i) {
    uint64_t best = 0, bbest = 0;
    for (size_t k = 0; k < nodes_[i].preds.size(); ++k) {
      const int p = nodes_[i].preds[k];
      if (via[i] < 0 || dist[p] > best) {
        best = dist[p];
        via[i] = p;
      }
      bbest = std::max(bbest, bdist[p] + nodes_[i].edge_burden[k]);
    }
    dist[i] = best + nodes_[i].w;
    bdist[i] = bbest + nodes_[i].w;
    e.work += nodes_[i].w;
  }
  e.span = dist[n - 1];
  e.burdened_span = bdist[n - 1];
  e.spawns = spawns_;
  e.syncs = syncs_;
  std::vector<bool> on_path(n, false);
  for (int i = n - 1; i >= 0; i = via[i]) on_path[i] = true;

  // What-if spans.
  e.whatif.assign(1 + regions, std::vector<double>(factors.size()));
  for (int set = 0; set <= regions; ++set) {
    for (size_t f = 0; f < factors.size(); ++f) {
      std::vector<double> d(n);
      for (int i = 0; i < n; ++i) {
        double best = 0;
        for (int p : nodes_[i].preds) best = std::max(best, d[p]);
        const bool scaled = nodes_[i].region >= 0 && (set == 0 || nodes_[i].region == set - 1);
        d[i] = best + (scaled ? static_cast<double>(nodes_[i].w) / factors[f] : static_cast<double>(nodes_[i].w));
      }
      e.whatif[set][f] = d[n - 1];
    }
  }

  // Per invocation: work, span within it, top-most, on the critical path.
  std::vector<uint64_t> local(n);
  for (size_t k = 0; k < invs_.size(); ++k) {
    const Invocation& inv = invs_[k];
    uint64_t work = 0;
    for (int i = inv.begin; i < inv.end; ++i) {
      uint64_t best = 0;
      for (int p : nodes_[i].preds) {
        if (p >= inv.begin && p < inv.end) best = std::max(best, local[p]);
      }
      local[i] = best + nodes_[i].w;
      work += nodes_[i].w;
    }
    const uint64_t span = local[inv.exit];
    bool topmost = true;
    for (int a = inv.parent; a >= 0; a = invs_[a].parent) {
      if (invs_[a].key == inv.key) topmost = false;
    }
    SiteExpect& s = e.sites[inv.key];
    ++s.count;
    if (topmost) {
      s.work_on_work += work;
      s.span_on_work += span;
      if (on_path[inv.entry]) {
        s.work_on_span += work;
        s.span_on_span += span;
      }
    }
  }
  return e;
}

}  // namespace

Expected Reference(const Program& program, uint64_t burden, int regions, const std::vector<int>& factors,
                   Mode mode) {
  Dag dag(program, burden, mode);
  dag.Run();
  return dag.Measure(regions, factors);
}

}  // namespace workspan_test
