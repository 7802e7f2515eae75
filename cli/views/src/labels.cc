#include "cilkprof/views/labels.h"

#include <functional>

namespace cilkprof::views {

StringTable::StringTable() { Intern(""); }

StringId StringTable::Intern(std::string_view text) {
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  const auto id = static_cast<StringId>(strings_.size());
  strings_.emplace_back(text);
  ids_.emplace(strings_.back(), id);
  return id;
}

LabelTable::LabelTable() {
  Label root;
  root.kind = RowKind::kRoot;
  root.name = strings_.Intern(kProgramRootName);
  Intern(root);
}

size_t LabelTable::KeyHash::operator()(const Key& k) const {
  uint64_t h = static_cast<uint64_t>(k.kind);
  for (uint64_t v : {uint64_t{k.name}, uint64_t{k.file}, uint64_t{k.module}, uint64_t{k.line}}) {
    h = (h ^ v) * 0x100000001B3ull;
    h ^= h >> 29;
  }
  return static_cast<size_t>(h);
}

LabelTable::Key LabelTable::KeyOf(const Label& label) {
  Key key{label.kind, label.name, 0, label.module, 0};
  // The flat view's rows below the module are distinct per file; its line rows per
  // line. Contexts merge by function and module whatever file they report.
  if (label.kind == RowKind::kFile || label.kind == RowKind::kFunction || label.kind == RowKind::kLine) {
    key.file = label.file;
  }
  if (label.kind == RowKind::kLine) key.line = label.line;
  return key;
}

LabelId LabelTable::Intern(const Label& label) {
  const Key key = KeyOf(label);
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  const auto id = static_cast<LabelId>(labels_.size());
  labels_.push_back(label);
  ids_.emplace(key, id);
  return id;
}

LabelId LabelTable::Intern(RowKind kind, std::string_view name, std::string_view file, uint32_t line,
                           std::string_view module) {
  Label label;
  label.kind = kind;
  label.name = strings_.Intern(name);
  label.file = strings_.Intern(file);
  label.line = line;
  label.module = strings_.Intern(module);
  return Intern(label);
}

}  // namespace cilkprof::views
