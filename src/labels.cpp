#include "detail/labels.hpp"

#include "tilecc/error.hpp"

namespace tilecc::detail {

int find_label(const LabelList& labels, const std::string& label) {
  // Labels are mostly single letters, compared as such: std::string's == calls memcmp, and the
  // inspector looks labels up a hundred times per plan.
  const std::size_t n = label.size();
  for (std::size_t p = 0; p < labels.size(); ++p) {
    const std::string& l = labels[p];
    if (l.size() == n && (n == 1 ? l[0] == label[0] : l == label)) return static_cast<int>(p);
  }
  return -1;
}

std::string show(const Operand& op) { return op.name + "[" + join(op.labels, ",") + "]"; }

void check_labels(const Operand& op) {
  TILECC_CHECK(op.shape != nullptr, "operand ", op.name, " has no tensor.");
  TILECC_CHECK(static_cast<int>(op.labels.size()) == op.shape->rank(), show(op), " gives ",
               op.labels.size(), " labels but ", op.name, " has ", op.shape->rank(),
               " indices; give one label per index.");
  for (std::size_t p = 0; p < op.labels.size(); ++p) {
    TILECC_CHECK(!op.labels[p].empty(), show(op), " has an empty label at position ", p, ".");
    TILECC_CHECK(find_label(op.labels, op.labels[p]) == static_cast<int>(p), show(op),
                 " uses label '", op.labels[p],
                 "' twice; traces and diagonals are not"
                 " supported, so give every index of a tensor its own label.");
  }
}

void check_same_space(const std::string& label, const Operand& x, int px, const Operand& y,
                      int py) {
  const IndexSpace& sx = x.shape->space(px);
  const IndexSpace& sy = y.shape->space(py);
  TILECC_CHECK(sx == sy, "label '", label, "' has space ", sx.describe(), " in ", show(x), " but ",
               sy.describe(), " in ", show(y),
               "; a label must mean the same space"
               " everywhere it appears.");
}

}  // namespace tilecc::detail
