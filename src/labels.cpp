#include "detail/labels.hpp"

#include "tilecc/error.hpp"

namespace tilecc::detail {

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
