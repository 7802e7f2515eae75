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
    for (int t = 0; t < templates; ++t) p.templates[t].scope_site = 0x1000 + 0x10 * t;
    for (int t = 0; t < templates; ++t) p.templates[t].body = Body(templates, /*in_frame=*/true, 0);
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
      } else if (r < 80 && in_frame) {
        s.kind = Stmt::kSpawn;
        s.site = 0x200000 + 0x10 * next_spawn_site_++;
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
};

}  // namespace

Program RandomProgram(uint64_t seed) { return Generator(seed).Make(); }

Program FibProgram(int n) {
  Program p;
  p.templates.resize(1);
  Template& fib = p.templates[0];
  fib.scope_site = 0x1000;
  Stmt charge;
  charge.kind = Stmt::kCharge;
  charge.units = 1;
  Stmt call_n1;
  call_n1.kind = Stmt::kCall;
  call_n1.target = 0;
  call_n1.cost = 1;
  call_n1.units = 1;
  Stmt spawn;
  spawn.kind = Stmt::kSpawn;
  spawn.site = 0x2000;
  spawn.body = {call_n1};
  Stmt call_n2 = call_n1;
  call_n2.cost = 2;
  Stmt sync;
  sync.kind = Stmt::kSync;
  fib.body = {charge, spawn, charge, call_n2, sync};
  p.budget = n;
  p.min_budget = 2;
  return p;
}

// ---------------------------------------------------------------------------------
// The interpreter on the runtime.

namespace {

// Not inlined: one scope-entry and one spawn pc per template call, as the reference
// models them (inlined copies would be distinct call sites, as in any program).
[[gnu::noinline]] void ExecBody(const Program& p, const std::vector<Stmt>& body, int budget, cilk::scope* scope);

bool WaitForThief() {
  static const bool wait = getenv("WORKSPAN_TEST_WAIT_FOR_THIEF") != nullptr;
  return wait;
}

[[gnu::noinline]] void CallTemplate(const Program& p, int t, int budget) {
  t_next_site = p.templates[t].scope_site;
  cilk::scope scope;
  ExecBody(p, p.templates[t].body, budget, &scope);
}

[[gnu::noinline]] void ExecBody(const Program& p, const std::vector<Stmt>& body, int budget, cilk::scope* scope) {
  for (const Stmt& s : body) {
    switch (s.kind) {
      case Stmt::kCharge:
        cilkprof_charge(s.units);
        break;
      case Stmt::kCall:
        if (budget - s.cost >= p.min_budget) {
          CallTemplate(p, s.target, budget - s.cost);
        } else {
          cilkprof_charge(s.units);
        }
        break;
      case Stmt::kSpawn: {
        t_next_site = s.site;
        const Stmt* child = &s;
        if (!WaitForThief()) {
          scope->spawn([&p, child, budget] { ExecBody(p, child->body, budget, nullptr); });
          break;
        }
        // Give an idle worker time to steal the continuation while the child runs, so
        // views are split and merged (bounded: the results do not depend on it).
        auto continued = std::make_shared<std::atomic<bool>>(false);
        scope->spawn([&p, child, budget, continued] {
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(60);
          while (!continued->load() && std::chrono::steady_clock::now() < deadline) {
          }
          ExecBody(p, child->body, budget, nullptr);
        });
        continued->store(true);
        break;
      }
      case Stmt::kSync:
        scope->sync();
        break;
      case Stmt::kRegion: {
        cilkprof::region region(RegionName(s.region).c_str());
        ExecBody(p, s.body, budget, scope);
        break;
      }
    }
  }
}

}  // namespace

void RunOnRuntime(const Program& program) { CallTemplate(program, 0, program.budget); }

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
  Dag(const Program& p, uint64_t burden) : p_(p), burden_(burden) {}

  void Run() {
    int cur = NewNode(-1, {}, {});
    Call(0, p_.budget, cur, -1, -1, 0);
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

  void Call(int t, int budget, int& cur, int region, int parent_inv, uintptr_t parent_pc) {
    const uintptr_t pc = p_.templates[t].scope_site;
    const int inv = static_cast<int>(invs_.size());
    invs_.push_back({SiteKey{0, pc, parent_pc}, parent_inv, 0, 0, 0, 0});
    int c = NewNode(region, {cur}, {});
    invs_[inv].begin = invs_[inv].entry = c;
    std::vector<int> children;
    Body(p_.templates[t].body, budget, c, region, inv, &children, pc);
    ++syncs_;
    Sync(c, children, region);
    invs_[inv].exit = c;
    invs_[inv].end = static_cast<int>(nodes_.size());
    cur = NewNode(region, {c}, {});
  }

  void Sync(int& cur, std::vector<int>& children, int region) {
    std::vector<int> preds = {cur};
    preds.insert(preds.end(), children.begin(), children.end());
    cur = NewNode(region, std::move(preds), {});
    children.clear();
  }

  void Body(const std::vector<Stmt>& body, int budget, int& cur, int region, int inv, std::vector<int>* children,
            uintptr_t context_pc) {
    for (const Stmt& s : body) {
      switch (s.kind) {
        case Stmt::kCharge:
          nodes_[cur].w += s.units;
          break;
        case Stmt::kCall:
          if (budget - s.cost >= p_.min_budget) {
            Call(s.target, budget - s.cost, cur, region, inv, context_pc);
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
          Body(s.body, budget, c, region, child, nullptr, s.site);
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
          Body(s.body, budget, cur, inner, inv, children, context_pc);
          cur = NewNode(region, {cur}, {});
          break;
        }
      }
    }
  }

  const Program& p_;
  uint64_t burden_;
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

Expected Reference(const Program& program, uint64_t burden, int regions, const std::vector<int>& factors) {
  Dag dag(program, burden);
  dag.Run();
  return dag.Measure(regions, factors);
}

}  // namespace workspan_test
