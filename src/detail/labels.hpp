#pragma once
// Label checks shared by the contraction plan and the permuted addition.
#include <string>

#include "tilecc/plan.hpp"

namespace tilecc::detail {

/** Position of `label` in `labels`, or -1. Inline: the permuted addition looks up each of its
 *  labels, and labels are mostly single letters, compared as such (std::string's == calls
 *  memcmp). */
inline int find_label(const LabelList& labels, const std::string& label) {
  const std::size_t n = label.size();
  for (std::size_t p = 0; p < labels.size(); ++p) {
    const std::string& l = labels[p];
    if (l.size() == n && (n == 1 ? l[0] == label[0] : l == label)) return static_cast<int>(p);
  }
  return -1;
}

/** "t2[i,j,a,b]" for messages. */
std::string show(const Operand& op);

/** One label per index, no label twice, a shape present. */
void check_labels(const Operand& op);

/** Label `label` must mean the same space at position px of x and py of y. */
void check_same_space(const std::string& label, const Operand& x, int px, const Operand& y, int py);

}  // namespace tilecc::detail
