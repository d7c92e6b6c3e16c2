#include "tilecc/plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "detail/labels.hpp"
#include "plan/label_ids.hpp"
#include "plan/prices.hpp"
#include "tilecc/error.hpp"
#include "tilecc/trace.hpp"

namespace tilecc {

ContractionPlan::ContractionPlan(Operand c, Operand a, Operand b, PlanLayout layout,
                                 const CostModel& model, int workers)
    : c_(std::move(c)), a_(std::move(a)), b_(std::move(b)), layout_(layout), workers_(workers) {
  inspector_started_ = clock_seconds();
  TILECC_CHECK(workers >= 1, "a plan is cut for at least one worker, got ", workers,
               "; pass the number of threads that will run it.");
  // The labels are checked at once, as sets; only a contraction that fails is checked label by
  // label, for the message that names its first fault.
  auto counted = [](const Operand& op) {
    return op.shape != nullptr && static_cast<int>(op.labels.size()) == op.shape->rank();
  };
  if (!counted(c_) || !counted(a_) || !counted(b_)) report_label_fault();
  const LabelIds labels(c_, a_, b_);
  if (!labels.valid()) report_label_fault();
  // A label means one space wherever it appears.
  for (int p = 0; p < labels.c.size(); ++p) {
    if (const int pa = labels.a_at[static_cast<std::size_t>(p)]; pa >= 0)
      detail::check_same_space(c_.labels[static_cast<std::size_t>(p)], a_, pa, c_, p);
    if (const int pb = labels.b_at[static_cast<std::size_t>(p)]; pb >= 0)
      detail::check_same_space(c_.labels[static_cast<std::size_t>(p)], b_, pb, c_, p);
  }
  for (int p = 0; p < labels.a.size(); ++p)
    if (const int pb = labels.b_at[static_cast<std::size_t>(labels.a[p])]; pb >= 0)
      detail::check_same_space(a_.labels[static_cast<std::size_t>(p)], a_, p, b_, pb);
  Prices prices(model, *a_.shape, *b_.shape);
  build(labels, prices);
  account_tasks(prices);
  inspector_seconds_ = clock_seconds() - inspector_started_;
}

void ContractionPlan::report_label_fault() const {
  detail::check_labels(c_);
  detail::check_labels(a_);
  detail::check_labels(b_);
  for (std::size_t p = 0; p < c_.labels.size(); ++p) {
    const std::string& l = c_.labels[p];
    const int pa = detail::find_label(a_.labels, l), pb = detail::find_label(b_.labels, l);
    TILECC_CHECK(pa >= 0 || pb >= 0, "output label '", l, "' of ", detail::show(c_),
                 " appears in neither ", detail::show(a_), " nor ", detail::show(b_),
                 "; every output label must come from an operand.");
    TILECC_CHECK(pa < 0 || pb < 0, "label '", l, "' appears in ", detail::show(a_), ", ",
                 detail::show(b_), " and the output ", detail::show(c_),
                 "; batched (Hadamard) labels are not supported, so sum or keep each label once.");
    if (pa >= 0) detail::check_same_space(l, a_, pa, c_, static_cast<int>(p));
    if (pb >= 0) detail::check_same_space(l, b_, pb, c_, static_cast<int>(p));
  }
  for (const Operand* op : {&a_, &b_}) {
    const Operand& other = op == &a_ ? b_ : a_;
    for (std::size_t p = 0; p < op->labels.size(); ++p) {
      const std::string& l = op->labels[p];
      const int po = detail::find_label(other.labels, l);
      TILECC_CHECK(po >= 0 || detail::find_label(c_.labels, l) >= 0, "label '", l, "' of ",
                   detail::show(*op), " appears neither in ", detail::show(other),
                   " nor in the output ", detail::show(c_),
                   "; a summed label must appear in"
                   " both operands.");
      if (po >= 0 && op == &a_) detail::check_same_space(l, a_, static_cast<int>(p), b_, po);
    }
  }
  // Not reached: labels that fail as sets fail one of the checks above.
  throw InputError(detail::concat("the labels of ", expression(), " do not form a contraction."));
}

std::string ContractionPlan::expression() const {
  return detail::show(c_) + " += " + detail::show(a_) + " * " + detail::show(b_);
}

std::string ContractionPlan::summary() const {
  char buf[768];
  const char* out = output_ == Output::direct       ? "direct"
                    : output_ == Output::transposed ? "transposed"
                                                    : "buffered";
  double predicted = 0.0;
  for (double s : modelled_) predicted += s;
  std::snprintf(buf, sizeof buf,
                "%s: %zu %stasks (%zu loop tuples), %lld products, %.3g of %.3g dense "
                "flops (%.1f%%), %lld operand permutations, output %s, scratch %.2f MiB/worker, "
                "predicted %.3g ms of task time, inspector %.3g ms",
                expression().c_str(), tasks_.size(), layout_ == PlanLayout::tce ? "TCE " : "",
                loop_.size(), static_cast<long long>(products_.size()), executed_flops_,
                dense_flops_, dense_flops_ > 0 ? 100.0 * executed_flops_ / dense_flops_ : 0.0,
                static_cast<long long>(permuted_operands_), out,
                static_cast<double>(scratch_bytes_) / 1048576.0, predicted * 1e3,
                inspector_seconds_ * 1e3);
  std::string text = buf;
  if (workers_ > 1) {
    const auto slabs = std::count_if(tasks_.begin(), tasks_.end(),
                                     [](const Task& t) { return t.slab.side != Side::whole; });
    text += ", tasks cut for " + std::to_string(workers_) + " workers";
    if (slabs > 0) text += " (" + std::to_string(slabs) + " slabs of output blocks)";
  }
  return text;
}

}  // namespace tilecc
