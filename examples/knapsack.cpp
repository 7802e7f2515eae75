// knapsack: the 0-1 knapsack problem by the Cilk-5 branch-and-bound search.
// Items are sorted by value density; every node of the search tree spawns the
// "leave the item" branch and runs the "take it" branch (Cilk-5's order), prunes
// subtrees whose fractional upper bound cannot beat the best value found so far
// (shared by all workers), and decides the items past the first 16 serially.
// The pruning makes the amount of work depend on the schedule; the result never
// does. The search time varies a lot between instances: change the seed with care.
#include <cilk/cilk.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/example_support.hpp"

namespace ex = cilk_examples;

namespace {

const ex::Program kProgram{
    "knapsack",
    "Solves a random 0-1 knapsack instance (weights 1..100, values correlated with weights)\n"
    "by parallel branch and bound: a spawn per item decision, pruning by the fractional\n"
    "upper bound against the best value found so far. Verified against dynamic programming.",
    {{"items", "number of items", 50, 1, 64},
     {"capacity", "knapsack capacity", 1800, 0, 1'000'000},
     {"seed", "instance seed", 1, 0, 1'000'000'000}}};

// Decisions below this depth are searched serially. Pruning cuts most subtrees
// after a few levels, so a cutoff by items left would still spawn for almost
// every node; a depth cutoff bounds the spawns to 2^kSpawnDepth.
constexpr std::size_t kSpawnDepth = 16;

struct Item {
  int weight;
  int value;
};

constexpr int kInfeasible = std::numeric_limits<int>::min();

class Solver {
 public:
  explicit Solver(std::vector<Item> items) : items_(std::move(items)) {}

  int solve(int capacity) { return search(0, capacity, 0); }

 private:
  // Best value reachable from item i on, with `capacity` left and `value` packed.
  // The first kSpawnDepth decisions spawn; the rest run in search_serially, a
  // function without a Cilk scope, so the millions of serial nodes do not pay for
  // the spawning frame's larger prologue (the usual Cilk coarsening).
  __attribute__((noinline)) int search(std::size_t i, int capacity, int value) {
    if (i >= kSpawnDepth) return search_serially(i, capacity, value);
    int settled_value = 0;
    if (settled(i, capacity, value, &settled_value)) return settled_value;
    const Item item = items_[i];
    int with = kInfeasible;
    int without = kInfeasible;
    cilk::scope scope;
    scope.spawn([&] { without = search(i + 1, capacity, value); });
    with = search(i + 1, capacity - item.weight, value + item.value);
    scope.sync();
    return std::max(with, without);
  }

  __attribute__((noinline)) int search_serially(std::size_t i, int capacity, int value) {
    int settled_value = 0;
    if (settled(i, capacity, value, &settled_value)) return settled_value;
    const Item item = items_[i];
    const int without = search_serially(i + 1, capacity, value);
    const int with = search_serially(i + 1, capacity - item.weight, value + item.value);
    return std::max(with, without);
  }

  // True, with the node's value in *result, when the node needs no search: it is
  // over capacity, a leaf (which records its value), or pruned by the bound.
  bool settled(std::size_t i, int capacity, int value, int* result) {
    if (capacity < 0) {
      *result = kInfeasible;
      return true;
    }
    if (i == items_.size() || capacity == 0) {
      *result = record(value);
      return true;
    }
    if (!promising(i, capacity, value)) {
      *result = kInfeasible;
      return true;
    }
    return false;
  }

  // The fractional bound: items are sorted by density, so no completion can add
  // more than capacity * (density of item i). Prune if that cannot beat the best.
  bool promising(std::size_t i, int capacity, int value) const {
    const double bound = value + static_cast<double>(capacity) * items_[i].value / items_[i].weight;
    return bound >= best_.load(std::memory_order_relaxed);
  }

  int record(int value) {
    int best = best_.load(std::memory_order_relaxed);
    while (value > best && !best_.compare_exchange_weak(best, value, std::memory_order_relaxed)) {
    }
    return value;
  }

  std::vector<Item> items_;
  std::atomic<int> best_{0};
};

int solve_by_dynamic_programming(const std::vector<Item>& items, int capacity) {
  std::vector<int> best(static_cast<std::size_t>(capacity) + 1, 0);
  for (const Item& item : items) {
    for (int c = capacity; c >= item.weight; --c) best[c] = std::max(best[c], best[c - item.weight] + item.value);
  }
  return best[capacity];
}

}  // namespace

int main(int argc, char** argv) {
  return ex::guarded_main(kProgram, [&] {
    const auto args = ex::parse_args(kProgram, argc, argv);
    const int n = static_cast<int>(args[0]);
    const int capacity = static_cast<int>(args[1]);
    ex::print_header(kProgram, ex::format("items=%d capacity=%d seed=%lld", n, capacity, args[2]));

    std::vector<Item> items(static_cast<std::size_t>(n));
    ex::Random rng(static_cast<std::uint64_t>(args[2]));
    for (Item& item : items) {
      item.weight = 1 + static_cast<int>(rng.below(100));
      item.value = item.weight + 10 + static_cast<int>(rng.below(10));
    }
    // Densest first: the bound in promising() relies on this order.
    std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
      return static_cast<std::int64_t>(a.value) * b.weight > static_cast<std::int64_t>(b.value) * a.weight;
    });

    Solver solver(items);
    int best = 0;
    const double seconds = ex::time_it([&] { best = cilk::run([&] { return solver.solve(capacity); }); });

    ex::print_result(ex::format("best value %d", best));
    const int expected = solve_by_dynamic_programming(items, capacity);
    if (best != expected) {
      ex::verification_failed(kProgram, ex::format("branch and bound found %d but dynamic programming gives %d", best, expected));
    }
    ex::print_verified("equals the dynamic-programming optimum");
    ex::print_time(seconds);
  });
}
