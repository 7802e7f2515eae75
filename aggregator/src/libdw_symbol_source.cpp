// The libdw Symbolizer (symbolizer.h) as a SymbolSource.
#include <memory>

#include "cilkprof/aggregator/symbol_source.h"
#include "cilkprof/aggregator/symbolizer.h"

namespace cilkprof::aggregator {
namespace {

class LibdwSymbolSource final : public SymbolSource {
 public:
  std::vector<profile::SourceFrame> Symbolize(const std::string& module_path,
                                              const std::string& build_id,
                                              uint64_t offset) override {
    return symbolizer_.Symbolize(module_path, build_id, offset);
  }
  profile::SourceFrame SymbolizeData(const std::string& module_path, const std::string& build_id,
                                     uint64_t offset) override {
    return symbolizer_.SymbolizeData(module_path, build_id, offset);
  }
  std::vector<std::string> Warnings() const override { return symbolizer_.Warnings(); }

 private:
  Symbolizer symbolizer_;
};

}  // namespace

SymbolSourceFactory LibdwSymbolSourceFactory() {
  return [] { return std::make_unique<LibdwSymbolSource>(); };
}

}  // namespace cilkprof::aggregator
