// The entry points that use the libdw symbolizer by default. They live in
// cilkprof_aggregator, apart from the core, so that the core links without libdw.
#include "cilkprof/aggregator/import.h"
#include "cilkprof/aggregator/server.h"
#include "cilkprof/aggregator/symbol_source.h"

namespace cilkprof::aggregator {

Result<std::unique_ptr<Aggregator>> Aggregator::Start(AggregatorOptions options) {
  return Start(std::move(options), LibdwSymbolSourceFactory());
}

Result<ImportReport> ImportFrameStream(const std::string& spill_path,
                                       const std::string& output_path) {
  return ImportFrameStream(spill_path, output_path, LibdwSymbolSourceFactory());
}

}  // namespace cilkprof::aggregator
