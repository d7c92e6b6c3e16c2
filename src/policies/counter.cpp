// `counter`: the inspector's tasks (null tuples already gone) behind one shared counter. Tasks go
// out by decreasing cost, `quantum` per fetch, so the counter acts as a dynamic LPT: the big tasks
// start first and the small ones fill the gaps at the end. A lone worker has no gaps to fill and
// takes them in the task list's order (see StageOrder).
#include <algorithm>
#include <atomic>
#include <span>
#include <vector>

#include "policies.hpp"

namespace tilecc::policies {
namespace {

/** The next `quantum` tasks of `tasks` from a shared counter (NXTVAL): empty once it is spent. */
std::span<const task_id_t> take_quantum(std::span<const task_id_t> tasks, Tickets& counter,
                                        task_id_t quantum) {
  const auto size = static_cast<task_id_t>(tasks.size());
  const task_id_t begin = counter.take(quantum);
  if (begin >= size) return {};
  const task_id_t end = std::min(begin + quantum, size);
  return tasks.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
}

class CounterPolicy final : public SchedulePolicy {
 public:
  CounterPolicy(int quantum, std::shared_ptr<TaskCounter> shared)
      : quantum_(quantum), next_(std::move(shared)) {}

  void start(const TaskPool& pool, int workers) override {
    order_ = workers == 1 ? stage_order_.sort(pool.stages, pool.costs.size())
                          : cost_order_.sort(pool.costs, pool.stages);
    next_.reset(pool.rank_local);
  }

  std::span<const task_id_t> next(int /*worker*/) override {
    return take_quantum(order_, next_, quantum_);
  }

  std::int64_t shared_calls() const override { return next_.fetches(quantum_); }
  bool uses_counter() const override { return true; }

 private:
  task_id_t quantum_;
  DecreasingCostOrder cost_order_;
  StageOrder stage_order_;
  std::span<const task_id_t> order_;
  Tickets next_;
};

}  // namespace

std::unique_ptr<SchedulePolicy> make_counter(const PolicyOptions& options) {
  return std::make_unique<CounterPolicy>(options.quantum, options.counter);
}

}  // namespace tilecc::policies
