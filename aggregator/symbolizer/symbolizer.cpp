#include "cilkprof/aggregator/symbolizer.h"

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compile_unit_index.h"
#include "data_objects.h"
#include "function_names.h"
#include "module_session.h"
#include "source_frames.h"

namespace cilkprof::aggregator {

using symbolizer_internal::ModuleSession;

namespace {

std::string Basename(const std::string& path) {
  if (path.empty()) return "<unknown module>";
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos || slash + 1 == path.size() ? path : path.substr(slash + 1);
}

std::string OffsetName(const std::string& path, uint64_t offset) {
  char hex[24];
  std::snprintf(hex, sizeof hex, "+0x%" PRIx64, offset);
  return Basename(path) + hex;
}

profile::SourceFrame NamedFrame(std::string name) {
  profile::SourceFrame frame;
  frame.set_function(std::move(name));
  return frame;
}

}  // namespace

struct Symbolizer::Impl {
  // One per (path, build-id): the opened module (null when it could not be opened or
  // did not match) and every offset resolved in it so far.
  struct Module {
    std::unique_ptr<ModuleSession> session;
    std::unique_ptr<symbolizer_internal::CompileUnitIndex> compile_units;
    std::unique_ptr<symbolizer_internal::FunctionNames> names;
    std::unique_ptr<symbolizer_internal::DataObjects> data;  // made on the first data lookup
    std::unordered_map<uint64_t, std::vector<profile::SourceFrame>> frames;
  };

  Module& Find(const std::string& path, const std::string& build_id) {
    std::string key;
    key.reserve(path.size() + 1 + build_id.size());
    key.append(path).push_back('\0');
    key.append(build_id);
    auto [it, inserted] = modules.try_emplace(std::move(key));
    if (inserted) {
      Result<std::unique_ptr<ModuleSession>> opened = ModuleSession::Open(path, build_id);
      if (opened.ok()) {
        it->second.session = std::move(opened).value();
        it->second.compile_units = std::make_unique<symbolizer_internal::CompileUnitIndex>(
            it->second.session->module());
        it->second.names = std::make_unique<symbolizer_internal::FunctionNames>(
            it->second.session->module(), *it->second.compile_units);
      } else {
        warnings.push_back(opened.status().message());
      }
    }
    return it->second;
  }

  std::vector<profile::SourceFrame> Resolve(Module& module, const std::string& path,
                                            uint64_t offset) {
    if (module.session == nullptr) return {NamedFrame(OffsetName(path, offset))};
    std::vector<profile::SourceFrame> frames = symbolizer_internal::ResolveSourceFrames(
        module.session->module(), *module.compile_units, *module.names,
        offset + module.session->bias());
    if (frames.empty()) frames.push_back(NamedFrame("??"));
    return frames;
  }

  std::unordered_map<std::string, Module> modules;
  std::vector<std::string> warnings;
};

Symbolizer::Symbolizer() : impl_(std::make_unique<Impl>()) {}
Symbolizer::~Symbolizer() = default;

std::vector<profile::SourceFrame> Symbolizer::Symbolize(const std::string& module_path,
                                                        const std::string& build_id,
                                                        uint64_t offset) {
  Impl::Module& module = impl_->Find(module_path, build_id);
  auto cached = module.frames.find(offset);
  if (cached == module.frames.end()) {
    cached = module.frames.emplace(offset, impl_->Resolve(module, module_path, offset)).first;
  }
  return cached->second;
}

profile::SourceFrame Symbolizer::SymbolizeData(const std::string& module_path,
                                              const std::string& build_id, uint64_t offset) {
  Impl::Module& module = impl_->Find(module_path, build_id);
  if (module.session == nullptr) return NamedFrame(OffsetName(module_path, offset));
  if (module.data == nullptr) {
    module.data = std::make_unique<symbolizer_internal::DataObjects>(module.session->module());
  }
  std::optional<profile::SourceFrame> frame = module.data->At(offset + module.session->bias());
  return frame ? *std::move(frame) : NamedFrame(OffsetName(module_path, offset));
}

std::vector<std::string> Symbolizer::Warnings() const { return impl_->warnings; }

}  // namespace cilkprof::aggregator
