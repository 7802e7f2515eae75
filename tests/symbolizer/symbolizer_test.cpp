// The symbolizer against fixture programs with known functions, lines and inlining
// (tests/symbolizer/fixtures): the fixtures record code addresses exactly as the agent
// does (module path, build-id, ELF virtual address), and the expected lines come from
// "@probe:" markers in their sources.
#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cilkprof/aggregator/symbolizer.h"
#include "fixture_runner.h"

namespace cilkprof::aggregator {
namespace {

using cilkprof::testing::MarkerLine;
using cilkprof::testing::ProbeAddress;
using cilkprof::testing::RunFixture;
using Probes = std::map<std::string, ProbeAddress>;

const std::string kSourceDir = CILKPROF_FIXTURE_SOURCE_DIR;

// Each fixture runs once per test program.
const Probes& ProbesOf(const std::string& executable) {
  static std::map<std::string, Probes> cache;
  auto it = cache.find(executable);
  if (it == cache.end()) it = cache.emplace(executable, RunFixture(executable)).first;
  return it->second;
}

const ProbeAddress& Probe(const std::string& executable, const std::string& name) {
  const Probes& probes = ProbesOf(executable);
  auto it = probes.find(name);
  if (it == probes.end()) throw std::runtime_error(executable + " printed no probe " + name);
  return it->second;
}

std::string Basename(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

std::string Hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(value));
  return text;
}

uint16_t ElfType(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr header{};
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  return in ? header.e_type : 0;
}

// What one frame should say: the function, the source file (basename) holding both
// its line and its definition, and the markers of those lines.
struct Expected {
  std::string function;
  std::string file;
  std::string line_marker;
  std::string decl_marker;
  bool inlined = false;
};

void ExpectFrames(const std::vector<profile::SourceFrame>& frames,
                  const std::vector<Expected>& expected) {
  ASSERT_EQ(frames.size(), expected.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    SCOPED_TRACE("frame " + std::to_string(i) + ": " + frames[i].ShortDebugString());
    const std::string source = kSourceDir + "/" + expected[i].file;
    EXPECT_EQ(frames[i].function(), expected[i].function);
    EXPECT_EQ(Basename(frames[i].file()), expected[i].file);
    EXPECT_TRUE(std::filesystem::path(frames[i].file()).is_absolute());
    EXPECT_EQ(frames[i].line(), MarkerLine(source, expected[i].line_marker));
    EXPECT_EQ(frames[i].inlined(), expected[i].inlined);
    EXPECT_EQ(Basename(frames[i].function_file()), expected[i].file);
    EXPECT_EQ(frames[i].function_line(), MarkerLine(source, expected[i].decl_marker));
  }
}

std::vector<profile::SourceFrame> SymbolizeProbe(Symbolizer& symbolizer, const std::string& fixture,
                                                 const std::string& name) {
  const ProbeAddress& probe = Probe(fixture, name);
  return symbolizer.Symbolize(probe.module_path, probe.build_id, probe.offset);
}

// The frames the main-module probes must produce, wherever the DWARF comes from.
void ExpectMainModuleProbes(Symbolizer& symbolizer, const std::string& module_path,
                            const std::string& fixture) {
  auto at = [&](const std::string& name) {
    const ProbeAddress& probe = Probe(fixture, name);
    return symbolizer.Symbolize(module_path, probe.build_id, probe.offset);
  };
  {
    SCOPED_TRACE("noinline C-linkage function");
    ExpectFrames(at("leaf"), {{"fixture_leaf", "fixture_main.cpp", "leaf", "leaf-decl"}});
  }
  {
    SCOPED_TRACE("member of a class template in a namespace (demangled)");
    ExpectFrames(at("method"), {{"fixture::Box<int>::Twice(int) const", "fixture_main.cpp",
                                 "method", "method-decl"}});
  }
  {
    SCOPED_TRACE("C function (DW_AT_name, no linkage name)");
    ExpectFrames(at("c-function"),
                 {{"fixture_c_function", "fixture_c.c", "c-function", "c-function-decl"}});
  }
  {
    SCOPED_TRACE("two levels of always_inline functions in a noinline caller");
    ExpectFrames(at("inlined"),
                 {{"inline_caller", "fixture_main.cpp", "caller-calls-outer", "caller-decl", false},
                  {"fixture::InlinedOuter(int)", "fixture_main.cpp", "outer-calls-inner",
                   "outer-decl", true},
                  {"fixture::InlinedInner(int)", "fixture_main.cpp", "inner-body", "inner-decl",
                   true}});
  }
  {
    SCOPED_TRACE("function entry address");
    const auto frames = at("leaf-entry");
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].function(), "fixture_leaf");
    EXPECT_EQ(Basename(frames[0].file()), "fixture_main.cpp");
    EXPECT_EQ(frames[0].function_line(), MarkerLine(kSourceDir + "/fixture_main.cpp", "leaf-decl"));
  }
}

// The same program as a PIE (ET_DYN at a random address) and a non-PIE (ET_EXEC).
class SymbolizerFixtureTest : public ::testing::TestWithParam<const char*> {
 protected:
  std::string fixture() const { return GetParam(); }
  Symbolizer symbolizer_;
};

TEST_P(SymbolizerFixtureTest, FixtureIsTheIntendedElfType) {
  const std::string path = Probe(fixture(), "leaf").module_path;
  EXPECT_EQ(Basename(path), Basename(fixture()));
  EXPECT_EQ(ElfType(path), fixture() == CILKPROF_FIXTURE_PIE ? ET_DYN : ET_EXEC);
  EXPECT_FALSE(Probe(fixture(), "leaf").build_id.empty());
}

TEST_P(SymbolizerFixtureTest, ResolvesFunctionsLinesAndInlinedFrames) {
  const ProbeAddress& leaf = Probe(fixture(), "leaf");
  ExpectMainModuleProbes(symbolizer_, leaf.module_path, fixture());
  EXPECT_TRUE(symbolizer_.Warnings().empty());
}

TEST_P(SymbolizerFixtureTest, ResolvesSharedLibraryOffsets) {
  const std::string library = Probe(fixture(), "lib-function").module_path;
  ASSERT_EQ(Basename(library), "libcilkprof_symbolizer_fixture_lib.so");
  ASSERT_EQ(ElfType(library), ET_DYN);
  ExpectFrames(SymbolizeProbe(symbolizer_, fixture(), "lib-function"),
               {{"fixture_lib_function", "fixture_lib.cpp", "lib-function", "lib-function-decl"}});
  // g++ gives a function in an anonymous namespace no linkage name, so its name is the
  // qualified DW_AT_name; clang++ gives one, which demangles with the parameter list.
  auto frames = SymbolizeProbe(symbolizer_, fixture(), "lib-inlined");
  ASSERT_EQ(frames.size(), 2u);
  const std::string inlined_name = frames[1].function();
  EXPECT_TRUE(inlined_name == "(anonymous namespace)::LibInlined" ||
              inlined_name == "(anonymous namespace)::LibInlined(unsigned long*, int)")
      << inlined_name;
  frames[1].set_function("LibInlined");
  ExpectFrames(frames, {{"fixture_lib_function", "fixture_lib.cpp", "lib-inlined-call",
                         "lib-function-decl", false},
                        {"LibInlined", "fixture_lib.cpp", "lib-inlined-body", "lib-inlined-decl",
                         true}});
}

TEST_P(SymbolizerFixtureTest, NamesLibcFunctions) {
  // With or without libc's separate debug info (libc6-dbg), qsort is named.
  const auto frames = SymbolizeProbe(symbolizer_, fixture(), "libc-qsort");
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.front().function(), "qsort");
  EXPECT_FALSE(frames.front().inlined());
}

TEST_P(SymbolizerFixtureTest, UnknownOffsetIsQuestionMarks) {
  const ProbeAddress& leaf = Probe(fixture(), "leaf");
  const auto frames = symbolizer_.Symbolize(leaf.module_path, leaf.build_id, 0x7fff00000000);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function(), "??");
  EXPECT_EQ(frames[0].file(), "");
  EXPECT_EQ(frames[0].line(), 0u);
  EXPECT_TRUE(symbolizer_.Warnings().empty());
}

INSTANTIATE_TEST_SUITE_P(PieAndNonPie, SymbolizerFixtureTest,
                         ::testing::Values(CILKPROF_FIXTURE_PIE, CILKPROF_FIXTURE_NOPIE),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param) == CILKPROF_FIXTURE_PIE ? "Pie"
                                                                                  : "NonPie";
                         });

TEST(SymbolizerTest, FindsSeparateDebugInfoThroughDebuglink) {
  // debuglink/: the fixture without DWARF, plus its DWARF in a .debug file beside it
  // named by .gnu_debuglink. Same build-id and addresses as the original.
  Symbolizer symbolizer;
  ExpectMainModuleProbes(symbolizer, CILKPROF_FIXTURE_DEBUGLINK, CILKPROF_FIXTURE_PIE);
  EXPECT_TRUE(symbolizer.Warnings().empty());
}

TEST(SymbolizerTest, FindsCompileUnitsWithoutDebugAranges) {
  // clang emits no .debug_aranges, through which libdw 0.188 looks up CUs by address.
  Symbolizer symbolizer;
  ExpectMainModuleProbes(symbolizer, CILKPROF_FIXTURE_NOARANGES, CILKPROF_FIXTURE_PIE);
  EXPECT_TRUE(symbolizer.Warnings().empty());
}

TEST(SymbolizerTest, UsesTheElfSymbolTableWithoutDwarf) {
  Symbolizer symbolizer;
  auto at = [&](const std::string& name) {
    const ProbeAddress& probe = Probe(CILKPROF_FIXTURE_PIE, name);
    return symbolizer.Symbolize(CILKPROF_FIXTURE_STRIPPED, probe.build_id, probe.offset);
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"leaf", "fixture_leaf"},
      {"method", "fixture::Box<int>::Twice(int) const"},
      {"inlined", "inline_caller"},  // no DWARF, so no inlined frames either
      {"c-function", "fixture_c_function"}};
  for (const auto& [probe, function] : cases) {
    SCOPED_TRACE(probe);
    const auto frames = at(probe);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].function(), function);
    EXPECT_EQ(frames[0].file(), "");
    EXPECT_EQ(frames[0].line(), 0u);
    EXPECT_FALSE(frames[0].inlined());
  }
  EXPECT_TRUE(symbolizer.Warnings().empty());
}

TEST(SymbolizerTest, RebuiltModuleFallsBackToOffsetsWithOneWarning) {
  // The non-PIE fixture stands for a rebuilt PIE fixture: same kind of file, other
  // build-id. Its DWARF would give wrong names, so none is used.
  Symbolizer symbolizer;
  const ProbeAddress& recorded = Probe(CILKPROF_FIXTURE_PIE, "leaf");
  const std::string rebuilt = CILKPROF_FIXTURE_NOPIE;
  for (uint64_t offset : {recorded.offset, recorded.offset + 4, recorded.offset}) {
    const auto frames = symbolizer.Symbolize(rebuilt, recorded.build_id, offset);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].function(), Basename(rebuilt) + "+0x" + Hex(offset));
    EXPECT_EQ(frames[0].file(), "");
    EXPECT_EQ(frames[0].line(), 0u);
  }
  const auto warnings = symbolizer.Warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(rebuilt), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("build-id"), std::string::npos) << warnings[0];

  // The same file with its own build-id still resolves: the cache is per build-id.
  const ProbeAddress& own = Probe(CILKPROF_FIXTURE_NOPIE, "leaf");
  EXPECT_EQ(symbolizer.Symbolize(rebuilt, own.build_id, own.offset).at(0).function(),
            "fixture_leaf");
  EXPECT_EQ(symbolizer.Warnings().size(), 1u);
}

TEST(SymbolizerTest, UnrecordedBuildIdSkipsTheCheck) {
  Symbolizer symbolizer;
  const ProbeAddress& leaf = Probe(CILKPROF_FIXTURE_PIE, "leaf");
  EXPECT_EQ(symbolizer.Symbolize(leaf.module_path, "", leaf.offset).at(0).function(),
            "fixture_leaf");
  EXPECT_TRUE(symbolizer.Warnings().empty());
}

TEST(SymbolizerTest, UnusableModulesFallBackWithoutCrashing) {
  Symbolizer symbolizer;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/nonexistent/dir/libgone.so", "libgone.so+0x1234"},
      {std::filesystem::temp_directory_path().string(),
       Basename(std::filesystem::temp_directory_path().string()) + "+0x1234"},
      {kSourceDir + "/fixture_main.cpp", "fixture_main.cpp+0x1234"},  // not ELF
      {"/dev/null", "null+0x1234"},
      {"", "<unknown module>+0x1234"},
  };
  for (const auto& [path, expected] : cases) {
    SCOPED_TRACE(path);
    const auto frames = symbolizer.Symbolize(path, "\x01\x02", 0x1234);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].function(), expected);
    EXPECT_EQ(frames[0].line(), 0u);
  }
  const auto warnings = symbolizer.Warnings();
  ASSERT_EQ(warnings.size(), cases.size());
  EXPECT_NE(warnings[0].find("/nonexistent/dir/libgone.so"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("No such file"), std::string::npos) << warnings[0];
}

TEST(SymbolizerTest, KeepsAModuleOpenOnceResolved) {
  // Modules are opened once and results cached: a file deleted after its first lookup
  // (a rebuilt program, a cleaned build tree) still resolves new offsets.
  const std::filesystem::path directory = std::filesystem::path(::testing::TempDir()) /
                                          ("cilkprof-symbolizer-" + std::to_string(getpid()));
  std::filesystem::create_directories(directory);
  const std::filesystem::path copy = directory / "copied_fixture";
  std::filesystem::copy_file(CILKPROF_FIXTURE_PIE, copy,
                             std::filesystem::copy_options::overwrite_existing);
  Symbolizer symbolizer;
  const ProbeAddress& leaf = Probe(CILKPROF_FIXTURE_PIE, "leaf");
  const ProbeAddress& method = Probe(CILKPROF_FIXTURE_PIE, "method");
  EXPECT_EQ(symbolizer.Symbolize(copy.string(), leaf.build_id, leaf.offset).at(0).function(),
            "fixture_leaf");
  std::filesystem::remove_all(directory);
  EXPECT_EQ(symbolizer.Symbolize(copy.string(), leaf.build_id, leaf.offset).at(0).function(),
            "fixture_leaf");
  EXPECT_EQ(symbolizer.Symbolize(copy.string(), method.build_id, method.offset).at(0).function(),
            "fixture::Box<int>::Twice(int) const");
  EXPECT_TRUE(symbolizer.Warnings().empty());
}

// This process's vDSO: its build-id and the offset of one of its exported functions.
struct VdsoFunction {
  std::string build_id;
  uint64_t offset = 0;
  std::string name;
};

std::optional<VdsoFunction> FindVdsoFunction() {
  const auto* ehdr = reinterpret_cast<const Elf64_Ehdr*>(getauxval(AT_SYSINFO_EHDR));
  if (ehdr == nullptr) return std::nullopt;
  // The vDSO is one page or a few; its section headers are mapped too.
  std::string image(reinterpret_cast<const char*>(ehdr),
                    ehdr->e_shoff + size_t{ehdr->e_shnum} * ehdr->e_shentsize);
  elf_version(EV_CURRENT);
  Elf* elf = elf_memory(image.data(), image.size());
  if (elf == nullptr) return std::nullopt;
  VdsoFunction found;
  for (Elf_Scn* section = nullptr; (section = elf_nextscn(elf, section)) != nullptr;) {
    GElf_Shdr header;
    if (gelf_getshdr(section, &header) == nullptr) continue;
    Elf_Data* data = elf_getdata(section, nullptr);
    if (data == nullptr) continue;
    if (header.sh_type == SHT_NOTE) {
      GElf_Nhdr note;
      size_t name_offset = 0, desc_offset = 0;
      for (size_t offset = 0;
           (offset = gelf_getnote(data, offset, &note, &name_offset, &desc_offset)) > 0;) {
        if (note.n_type == NT_GNU_BUILD_ID) {
          found.build_id.assign(static_cast<const char*>(data->d_buf) + desc_offset, note.n_descsz);
        }
      }
    } else if (header.sh_type == SHT_DYNSYM) {
      for (size_t i = 0; i < header.sh_size / header.sh_entsize; ++i) {
        GElf_Sym symbol;
        if (gelf_getsym(data, static_cast<int>(i), &symbol) == nullptr) continue;
        const char* name = elf_strptr(elf, header.sh_link, symbol.st_name);
        if (name != nullptr && GELF_ST_TYPE(symbol.st_info) == STT_FUNC &&
            std::string(name).find("gettimeofday") != std::string::npos) {
          found.offset = symbol.st_value;  // the vDSO's first segment is at vaddr 0
          found.name = name;
        }
      }
    }
  }
  elf_end(elf);
  if (found.build_id.empty() || found.name.empty()) return std::nullopt;
  return found;
}

TEST(SymbolizerTest, ResolvesTheVdsoOfThisKernel) {
  const std::optional<VdsoFunction> vdso = FindVdsoFunction();
  if (!vdso) GTEST_SKIP() << "no vDSO with a build-id and gettimeofday in this process";
  Symbolizer symbolizer;
  for (const char* name : {"[vdso]", "linux-vdso.so.1"}) {
    SCOPED_TRACE(name);
    const auto frames = symbolizer.Symbolize(name, vdso->build_id, vdso->offset);
    ASSERT_FALSE(frames.empty());
    EXPECT_NE(frames.back().function().find("gettimeofday"), std::string::npos)
        << frames.back().function();
  }
  // Recorded under another kernel: a different build-id, so only an offset.
  const auto frames = symbolizer.Symbolize("[vdso]", "other kernel", 0x40);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function(), "[vdso]+0x40");
  EXPECT_EQ(symbolizer.Warnings().size(), 1u);
}

}  // namespace
}  // namespace cilkprof::aggregator
