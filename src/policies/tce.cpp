// `tce`: NWChem's Tensor Contraction Engine as it was. Every worker walks the same loop of tile
// tuples; one shared counter (NXTVAL) hands out loop positions one at a time, and only after
// taking a number does the worker test whether that tuple is a task at all, so every null tuple
// costs a counter fetch. Tasks run in loop order, whatever their cost.
#include <atomic>
#include <numeric>
#include <vector>

#include "policies.hpp"

namespace tilecc::policies {
namespace {

class TcePolicy final : public SchedulePolicy {
 public:
  explicit TcePolicy(std::shared_ptr<TaskCounter> shared) : next_(std::move(shared)) {}
  void start(const TaskPool& pool, int /*workers*/) override {
    loop_ = pool.loop;
    if (loop_.empty()) {  // no loop recorded: every task is one non-null tuple, in plan order
      identity_.resize(pool.costs.size());
      std::iota(identity_.begin(), identity_.end(), task_id_t{0});
      loop_ = identity_;
    }
    next_.reset(pool.rank_local);
  }

  std::span<const task_id_t> next(int /*worker*/) override {
    const auto size = static_cast<task_id_t>(loop_.size());
    for (;;) {
      const task_id_t n = next_.take(1);
      if (n >= size) return {};
      if (loop_[static_cast<std::size_t>(n)] >= 0)
        return loop_.subspan(static_cast<std::size_t>(n), 1);
    }
  }

  std::int64_t shared_calls() const override { return next_.fetches(1); }
  bool uses_counter() const override { return true; }

 private:
  std::span<const task_id_t> loop_;
  std::vector<task_id_t> identity_;
  Tickets next_;
};

}  // namespace

std::unique_ptr<SchedulePolicy> make_tce(const PolicyOptions& options) {
  return std::make_unique<TcePolicy>(options.counter);
}

}  // namespace tilecc::policies
