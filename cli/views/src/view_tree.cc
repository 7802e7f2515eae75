#include "cilkprof/views/view_tree.h"

namespace cilkprof::views {
namespace {

class Collector : public RowVisitor {
 public:
  explicit Collector(ViewTree* tree) : tree_(tree) {}

  void Begin(const WalkInfo& info) override {
    tree_->metrics = info.metrics->columns();
    tree_->program_total = info.program_total;
    columns_ = info.metrics->size();
  }

  void Enter(const RowView& row, uint32_t depth) override {
    ViewNode node;
    node.kind = row.kind;
    node.name = *row.name;
    node.file = *row.file;
    node.line = row.line;
    node.module = *row.module;
    node.edge = row.edge;
    node.inlined = row.inlined;
    node.inclusive.assign(row.inclusive, row.inclusive + columns_);
    node.exclusive.assign(row.exclusive, row.exclusive + columns_);
    node.cell = row.cell;
    const auto index = static_cast<uint32_t>(tree_->nodes.size());
    path_.resize(depth);
    if (depth > 0) {
      node.parent = path_.back();
      tree_->nodes[node.parent].children.push_back(index);
    }
    tree_->nodes.push_back(std::move(node));
    path_.push_back(index);
  }

 private:
  ViewTree* tree_;
  size_t columns_ = 0;
  std::vector<uint32_t> path_;
};

}  // namespace

RowView ViewNode::View() const {
  RowView row;
  row.kind = kind;
  row.name = &name;
  row.file = &file;
  row.line = line;
  row.module = &module;
  row.edge = edge;
  row.inlined = inlined;
  row.inclusive = inclusive.data();
  row.exclusive = exclusive.data();
  row.cell = cell;
  return row;
}

ViewTree Materialize(const ViewSource& source, const ViewOptions& options) {
  ViewTree tree;
  Collector collector(&tree);
  Walk(source, options, collector);
  return tree;
}

std::string RowLabel(const ViewNode& node) { return RowLabel(node.View()); }

}  // namespace cilkprof::views
