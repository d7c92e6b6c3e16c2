#pragma once
// Label checks shared by the contraction plan and the permuted addition.
#include <string>

#include "tilecc/plan.hpp"

namespace tilecc::detail {

/** Position of `label` in `labels`, or -1. */
int find_label(const LabelList& labels, const std::string& label);

/** "t2[i,j,a,b]" for messages. */
std::string show(const Operand& op);

/** One label per index, no label twice, a shape present. */
void check_labels(const Operand& op);

/** Label `label` must mean the same space at position px of x and py of y. */
void check_same_space(const std::string& label, const Operand& x, int px, const Operand& y, int py);

}  // namespace tilecc::detail
