// The symbolizer's data lookup (issue 14: lock objects): the variable holding an
// address in a module's .data/.bss and its declaration, from the fixture's locks
// (tests/symbolizer/fixtures/fixture_data.cpp).
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "cilkprof/aggregator/symbolizer.h"
#include "fixture_runner.h"

namespace cilkprof::aggregator {
namespace {

using cilkprof::testing::MarkerLine;
using cilkprof::testing::ProbeAddress;

const std::string kDataSource = std::string(CILKPROF_FIXTURE_SOURCE_DIR) + "/fixture_data.cpp";

const ProbeAddress& Probe(const std::string& executable, const std::string& name) {
  static std::map<std::string, std::map<std::string, ProbeAddress>> cache;
  auto it = cache.find(executable);
  if (it == cache.end()) it = cache.emplace(executable, cilkprof::testing::RunFixture(executable)).first;
  auto probe = it->second.find(name);
  if (probe == it->second.end()) throw std::runtime_error(executable + " printed no probe " + name);
  return probe->second;
}

std::string Basename(const std::string& path) { return std::filesystem::path(path).filename().string(); }

struct ExpectedData {
  const char* probe;
  const char* name;
  const char* declaration;  // the marker of its declaration's line
};

const ExpectedData kLocks[] = {
    {"data-global", "g_queue_mutex", "data-global"},
    {"data-static-member", "fixture_data::Pool::mutex_", "data-static-member"},
    {"data-struct-member", "fixture_data::g_stats+0x8", "data-struct"},
    {"data-file-static", "fixture_data::s_file_mutex", "data-file-static"},
    {"data-function-static", "fixture_data::FunctionMutex()::function_mutex", "data-function-static"},
};

class DataObjectsFixtureTest : public ::testing::TestWithParam<const char*> {};

TEST_P(DataObjectsFixtureTest, NamesLocksAndTheirDeclarations) {
  Symbolizer symbolizer;
  for (const ExpectedData& lock : kLocks) {
    SCOPED_TRACE(lock.probe);
    const ProbeAddress& probe = Probe(GetParam(), lock.probe);
    const profile::SourceFrame frame = symbolizer.SymbolizeData(probe.module_path, probe.build_id, probe.offset);
    EXPECT_EQ(frame.function(), lock.name);
    EXPECT_EQ(Basename(frame.file()), "fixture_data.cpp");
    EXPECT_TRUE(std::filesystem::path(frame.file()).is_absolute()) << frame.file();
    EXPECT_EQ(frame.line(), MarkerLine(kDataSource, lock.declaration));
    EXPECT_FALSE(frame.inlined());
  }
  EXPECT_TRUE(symbolizer.Warnings().empty());
}

INSTANTIATE_TEST_SUITE_P(PieAndNonPie, DataObjectsFixtureTest,
                         ::testing::Values(CILKPROF_FIXTURE_PIE, CILKPROF_FIXTURE_NOPIE),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param) == CILKPROF_FIXTURE_PIE ? "Pie" : "NonPie";
                         });

TEST(DataObjectsTest, FindsDeclarationsThroughDebuglink) {
  Symbolizer symbolizer;
  const ProbeAddress& probe = Probe(CILKPROF_FIXTURE_PIE, "data-static-member");
  const profile::SourceFrame frame =
      symbolizer.SymbolizeData(CILKPROF_FIXTURE_DEBUGLINK, probe.build_id, probe.offset);
  EXPECT_EQ(frame.function(), "fixture_data::Pool::mutex_");
  EXPECT_EQ(frame.line(), MarkerLine(kDataSource, "data-static-member"));
}

TEST(DataObjectsTest, NamesWithoutDwarfHaveNoDeclaration) {
  Symbolizer symbolizer;
  for (const ExpectedData& lock : kLocks) {
    SCOPED_TRACE(lock.probe);
    const ProbeAddress& probe = Probe(CILKPROF_FIXTURE_PIE, lock.probe);
    const profile::SourceFrame frame =
        symbolizer.SymbolizeData(CILKPROF_FIXTURE_STRIPPED, probe.build_id, probe.offset);
    EXPECT_EQ(frame.function(), lock.name);
    EXPECT_EQ(frame.file(), "");
    EXPECT_EQ(frame.line(), 0u);
  }
}

TEST(DataObjectsTest, AnAddressNoObjectHoldsIsTheModuleOffset) {
  Symbolizer symbolizer;
  // Code is no data object.
  const ProbeAddress& code = Probe(CILKPROF_FIXTURE_PIE, "leaf-entry");
  char hex[24];
  std::snprintf(hex, sizeof hex, "+0x%llx", static_cast<unsigned long long>(code.offset));
  EXPECT_EQ(symbolizer.SymbolizeData(code.module_path, code.build_id, code.offset).function(),
            Basename(code.module_path) + hex);
  // A module that cannot be read: the same form, and the module's warning.
  const profile::SourceFrame gone = symbolizer.SymbolizeData("/nonexistent/dir/libgone.so", "\x01", 0x4040);
  EXPECT_EQ(gone.function(), "libgone.so+0x4040");
  EXPECT_EQ(gone.line(), 0u);
  ASSERT_EQ(symbolizer.Warnings().size(), 1u);
  EXPECT_NE(symbolizer.Warnings()[0].find("libgone.so"), std::string::npos);
}

}  // namespace
}  // namespace cilkprof::aggregator
