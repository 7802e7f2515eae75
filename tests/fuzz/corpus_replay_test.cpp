// Every seed of the fuzz corpora (tests/fuzz/corpus/<target>/), among them the input of
// every crash the fuzzers found, run through its target's harness in every build, so
// that the oracles hold without clang or libFuzzer (docs/FUZZING.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_harness.h"

namespace cilkprof::aggregator::fuzzing {
namespace {

std::vector<std::filesystem::path> Seeds(const std::string& target) {
  std::vector<std::filesystem::path> seeds;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(CILKPROF_FUZZ_CORPUS_DIR) / target)) {
    if (entry.is_regular_file()) seeds.push_back(entry.path());
  }
  std::sort(seeds.begin(), seeds.end());
  return seeds;
}

std::string Contents(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void ReplayCorpus(const std::string& target, std::string (*check)(std::string_view)) {
  const auto seeds = Seeds(target);
  // The corpora are committed: an empty one means a broken checkout or path.
  ASSERT_GE(seeds.size(), 10u) << target;
  for (const auto& seed : seeds) {
    EXPECT_EQ(check(Contents(seed)), "") << seed;
  }
}

TEST(FuzzCorpusReplay, WireSeedsHoldTheWireOracles) { ReplayCorpus("wire", CheckWireStream); }

TEST(FuzzCorpusReplay, SpillSeedsHoldTheImportOracles) { ReplayCorpus("spill", CheckSpillImport); }

TEST(FuzzCorpusReplay, ProfileSeedsHoldTheReaderOracles) {
  ReplayCorpus("profile", CheckProfileReader);
}

}  // namespace
}  // namespace cilkprof::aggregator::fuzzing
