// Function names against c++filt's: for the functions g++ names only in their ELF
// symbols (tests/symbolizer/fixtures/fixture_names.cpp), the symbolizer must print
// what abi::__cxa_demangle prints for the symbol, at out-of-line copies and at inlined
// instances alike. The expectations are read from the fixture's symbol table with
// libelf, independently of the libdw code under test.
#include <cxxabi.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cilkprof/aggregator/symbolizer.h"
#include "fixture_runner.h"

namespace cilkprof::aggregator {
namespace {

using cilkprof::testing::ProbeAddress;
using cilkprof::testing::RunFixture;

const ProbeAddress& Probe(const std::string& executable, const std::string& name) {
  static std::map<std::string, std::map<std::string, ProbeAddress>> cache;
  auto it = cache.find(executable);
  if (it == cache.end()) it = cache.emplace(executable, RunFixture(executable)).first;
  auto probe = it->second.find(name);
  if (probe == it->second.end()) throw std::runtime_error(executable + " printed no probe " + name);
  return probe->second;
}

// What c++filt prints for the mangled function symbol of `path`'s .symtab that
// contains `offset`, its clone suffix (".cold", ".isra.0") removed.
std::string DemangledSymbolContaining(const std::string& path, uint64_t offset) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  std::string mangled;
  for (Elf_Scn* section = nullptr; elf != nullptr && (section = elf_nextscn(elf, section)) != nullptr;) {
    GElf_Shdr header;
    if (gelf_getshdr(section, &header) == nullptr || header.sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = elf_getdata(section, nullptr);
    for (size_t i = 0; data != nullptr && i < header.sh_size / header.sh_entsize; ++i) {
      GElf_Sym symbol;
      if (gelf_getsym(data, static_cast<int>(i), &symbol) == nullptr) continue;
      const char* name = elf_strptr(elf, header.sh_link, symbol.st_name);
      if (GELF_ST_TYPE(symbol.st_info) == STT_FUNC && name != nullptr &&
          std::strncmp(name, "_Z", 2) == 0 && symbol.st_value <= offset &&
          offset < symbol.st_value + symbol.st_size) {
        mangled = name;
      }
    }
  }
  if (elf != nullptr) elf_end(elf);
  close(fd);
  if (mangled.empty()) throw std::runtime_error(path + ": no mangled symbol contains the offset");
  mangled = mangled.substr(0, mangled.find('.'));
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || demangled == nullptr) throw std::runtime_error("cannot demangle " + mangled);
  return demangled.get();
}

constexpr const char* kHost = "fixture_names::LambdaHost(unsigned long*, int)";

class FunctionNamesTest : public ::testing::TestWithParam<const char*> {
 protected:
  // The probe's frames, symbolized from the module under test (the fixture itself, or
  // a copy of the PIE fixture with its DWARF elsewhere).
  std::vector<profile::SourceFrame> Frames(const std::string& probe_name) {
    const ProbeAddress& probe = Probe(Fixture(), probe_name);
    return symbolizer_.Symbolize(Module(probe), probe.build_id, probe.offset);
  }
  // c++filt's name for the symbol holding the probe's address.
  std::string SymbolName(const std::string& probe_name) {
    const ProbeAddress& probe = Probe(Fixture(), probe_name);
    return DemangledSymbolContaining(probe.module_path, probe.offset);
  }

 private:
  bool IsDebuglinkCopy() const { return std::string(GetParam()) == CILKPROF_FIXTURE_DEBUGLINK; }
  std::string Fixture() const {
    return IsDebuglinkCopy() ? CILKPROF_FIXTURE_PIE : GetParam();
  }
  std::string Module(const ProbeAddress& probe) const {
    return IsDebuglinkCopy() ? CILKPROF_FIXTURE_DEBUGLINK : probe.module_path;
  }

  Symbolizer symbolizer_;
};

TEST_P(FunctionNamesTest, OutOfLineFunctionsAreNamedAsCxxFiltNamesTheirSymbols) {
  for (const char* probe : {"name-anonymous-leaf", "name-anonymous-out-of-line", "name-static-leaf",
                            "name-lambda-out-of-line", "name-second-lambda",
                            "name-lambda-called-out-of-line", "name-template-over-lambda",
                            "name-cold-part"}) {
    SCOPED_TRACE(probe);
    const auto frames = Frames(probe);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].function(), SymbolName(probe));
    EXPECT_FALSE(frames[0].inlined());
  }
  // The expectations themselves.
  EXPECT_EQ(SymbolName("name-anonymous-leaf"), "(anonymous namespace)::AnonymousLeaf(unsigned long*, int)");
  EXPECT_EQ(SymbolName("name-static-leaf"), "StaticLeaf(unsigned long*, int)");
  EXPECT_EQ(SymbolName("name-cold-part"), "(anonymous namespace)::WithColdPart(unsigned long*, int)");
#if !defined(__clang__)
  // clang++ numbers the lambdas of a function with internal names ("$_0") instead.
  EXPECT_EQ(SymbolName("name-lambda-out-of-line"),
            std::string(kHost) + "::{lambda()#1}::operator()() const");
  EXPECT_EQ(SymbolName("name-second-lambda"),
            std::string(kHost) + "::{lambda()#2}::operator()() const");
  const std::string lambda_with_int = SymbolName("name-lambda-called-out-of-line");
  EXPECT_EQ(lambda_with_int.rfind(std::string(kHost) + "::{lambda(int)#", 0), 0u) << lambda_with_int;
  EXPECT_TRUE(lambda_with_int.ends_with("}::operator()(int) const")) << lambda_with_int;
  const std::string apply = SymbolName("name-template-over-lambda");
  EXPECT_EQ(apply.rfind("int (anonymous namespace)::ApplyLocal<" + std::string(kHost) + "::{lambda()#", 0), 0u)
      << apply;
#endif
}

TEST_P(FunctionNamesTest, InlinedInstancesHaveTheNameOfTheOutOfLineCopy) {
  // Views merge rows by name: an inlined instance must be named exactly as the
  // function's out-of-line copy, which alone has the symbol.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"name-lambda-inlined", "name-lambda-called-out-of-line"},
      {"name-anonymous-inlined", "name-anonymous-out-of-line"}};
  for (const auto& [inlined, out_of_line] : cases) {
    SCOPED_TRACE(inlined);
    const auto frames = Frames(inlined);
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(frames[0].function(), kHost);
    EXPECT_FALSE(frames[0].inlined());
    EXPECT_EQ(frames[1].function(), SymbolName(out_of_line));
    EXPECT_TRUE(frames[1].inlined());
  }
}

TEST_P(FunctionNamesTest, LambdasWithoutAnyCopyAreNamedFromTheirFunction) {
  // Inlined at their only call, these lambdas have no symbol. clang++ writes their
  // linkage names into the DWARF; g++ does not, and without the mangled name a
  // lambda's number is unknown: it is "{lambda()}" ("{lambda(...)}" when it takes
  // parameters) inside the full name of the function that declares it.
  const std::string host = kHost;
  const std::string first_lambda = SymbolName("name-lambda-out-of-line");
  struct Case {
    const char* probe;
    std::string caller;           // the out-of-line function it was inlined into
    std::string gcc_name;         // the fallback
    std::string clang_signature;  // how c++filt's name ends
  };
  const std::vector<Case> cases = {
      {"name-lambda-inlined-only", host, host + "::{lambda()}::operator()", "::operator()() const"},
      {"name-parameter-lambda-inlined-only", host, host + "::{lambda(...)}::operator()",
       "::operator()(int) const"},
      {"name-nested-lambda-inlined-only", first_lambda, first_lambda + "::{lambda()}::operator()",
       "::operator()() const"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.probe);
    const auto frames = Frames(c.probe);
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(frames[0].function(), c.caller);
    EXPECT_TRUE(frames[1].inlined());
    const std::string& name = frames[1].function();
#if defined(__clang__)
    EXPECT_EQ(name.rfind(c.caller + "::", 0), 0u) << name;
    EXPECT_TRUE(name.ends_with(c.clang_signature)) << name;
#else
    EXPECT_EQ(name, c.gcc_name);
#endif
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FunctionNamesTest,
                         ::testing::Values(CILKPROF_FIXTURE_PIE, CILKPROF_FIXTURE_NOPIE,
                                           CILKPROF_FIXTURE_DEBUGLINK),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           const std::string param = info.param;
                           return param == CILKPROF_FIXTURE_PIE      ? std::string("Pie")
                                  : param == CILKPROF_FIXTURE_NOPIE ? std::string("NonPie")
                                                                    : std::string("Debuglink");
                         });

}  // namespace
}  // namespace cilkprof::aggregator
