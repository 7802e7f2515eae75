// What a view row stands for, interned once: every function, file and module string
// of a profile is stored once and rows refer to it by id, so that the analysis works
// on integers (as pprof's internal/graph and heaptrack do) and its memory grows with
// the number of rows, not with the length of C++ names times rows.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cilkprof::views {

// How a row was entered from its parent: a call, a Cilk spawn, or an OpenMP task
// created at the parent's site (wire::EDGE_TASK, issue 17). Spawns and tasks are the
// logical edges: the views mark them ("[spawn] f", "[task] f") and the exports put a
// "[spawn]" or "[task]" frame between the child and its creator.
enum class Edge : uint8_t { kCall, kSpawn, kTask };

// The edge of a wire::EdgeKind value; unknown values read as calls.
inline Edge EdgeOf(int wire_edge) {
  return wire_edge == 1 ? Edge::kSpawn : wire_edge == 2 ? Edge::kTask : Edge::kCall;
}
// "[spawn]" or "[task]" for a logical edge, nullptr for a call.
inline const char* EdgeMarker(Edge edge) {
  return edge == Edge::kSpawn ? "[spawn]" : edge == Edge::kTask ? "[task]" : nullptr;
}
// "call", "spawn" or "task" (the json and csv renderings' edge field).
inline const char* EdgeName(Edge edge) {
  return edge == Edge::kSpawn ? "spawn" : edge == Edge::kTask ? "task" : "call";
}

// The kind of a row. Which fields of a label make it distinct depends on it.
enum class RowKind : uint8_t {
  kRoot,            // "<program root>": whole-program totals
  kContext,         // a function in a calling context (top-down, bottom-up)
  kPartialUnwind,   // "<partial unwind>": the unwind stopped; children are what it got
  kElidedFrames,    // frames elided in the middle of a deep stack: parent outermost, children innermost
  kModule,          // flat view: a load module
  kFile,            // flat view: a source file
  kFunction,        // flat view: a function within a file
  kLine,            // flat view: a line of a function
  kLock,            // top-down: "[lock NAME]", a lock waited for or released (a leaf under the call)
};

inline constexpr const char* kProgramRootName = "<program root>";
inline constexpr const char* kPartialUnwindName = "<partial unwind>";
// Not a function: it never has time of its own (a sample's innermost frames are always
// below it), only the inclusive time of the deep stacks that pass through it.
inline constexpr const char* kElidedFramesName = "[deep stack: frames elided]";
// A lock object's row (issue 14): "[lock g_mutex]", "[lock 0x7f12a4c0]". Its values are
// the lock_wait of the call above it that waited, or the lock_blame of the unlock above it.
inline constexpr const char* kLockRowPrefix = "[lock ";

using LabelId = uint32_t;
using StringId = uint32_t;

// Interned strings; id 0 is the empty string.
class StringTable {
 public:
  StringTable();
  StringId Intern(std::string_view text);
  const std::string& operator[](StringId id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;  // a deque: elements never move, so the views stay valid
  std::unordered_map<std::string_view, StringId> ids_;
};

// One row label. name: the function (the file path for kFile, the module path for
// kModule); file: where the function is defined (for kLine, kFile and kFunction rows
// of the flat view, the line's file); line: the function's first line (for kLine the
// line itself); 0 when unknown.
struct Label {
  RowKind kind = RowKind::kContext;
  StringId name = 0;
  StringId file = 0;
  uint32_t line = 0;
  StringId module = 0;
};

// The labels of one analysis, with their strings. A label's identity (what merges)
// is (kind, name, module), plus the file for the flat view's file, function and line
// rows and the line for line rows; a context label keeps the file and line it was
// first interned with.
class LabelTable {
 public:
  LabelTable();
  LabelId Intern(const Label& label);
  // The same, from strings.
  LabelId Intern(RowKind kind, std::string_view name, std::string_view file, uint32_t line, std::string_view module);

  const Label& operator[](LabelId id) const { return labels_[id]; }
  size_t size() const { return labels_.size(); }
  const std::string& Name(LabelId id) const { return strings_[labels_[id].name]; }
  const std::string& File(LabelId id) const { return strings_[labels_[id].file]; }
  const std::string& Module(LabelId id) const { return strings_[labels_[id].module]; }
  const StringTable& strings() const { return strings_; }

  // Label 0 is the program root.
  static constexpr LabelId kRoot = 0;

 private:
  struct Key {
    RowKind kind;
    StringId name, file, module;
    uint32_t line;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  static Key KeyOf(const Label& label);

  StringTable strings_;
  std::vector<Label> labels_;
  std::unordered_map<Key, LabelId, KeyHash> ids_;
};

}  // namespace cilkprof::views
