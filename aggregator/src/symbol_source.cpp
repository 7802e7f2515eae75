// SymbolSource's default data lookup (see symbol_source.h).
#include "cilkprof/aggregator/symbol_source.h"

#include <fmt/format.h>

namespace cilkprof::aggregator {

profile::SourceFrame SymbolSource::SymbolizeData(const std::string& module_path,
                                                 const std::string& /*build_id*/, uint64_t offset) {
  const size_t slash = module_path.find_last_of('/');
  profile::SourceFrame frame;
  frame.set_function(fmt::format(
      "{}+0x{:x}", slash == std::string::npos ? module_path : module_path.substr(slash + 1), offset));
  return frame;
}

}  // namespace cilkprof::aggregator
