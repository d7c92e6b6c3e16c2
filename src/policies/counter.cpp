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
std::span<const task_id_t> take_quantum(std::span<const task_id_t> tasks,
                                        std::atomic<task_id_t>& counter, task_id_t quantum) {
  const auto size = static_cast<task_id_t>(tasks.size());
  const task_id_t begin = counter.fetch_add(quantum, std::memory_order_relaxed);
  if (begin >= size) return {};
  const task_id_t end = std::min(begin + quantum, size);
  return tasks.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
}

class CounterPolicy final : public SchedulePolicy {
 public:
  explicit CounterPolicy(int quantum) : quantum_(quantum) {}

  void start(const TaskPool& pool, int workers) override {
    order_ = workers == 1 ? stage_order_.sort(pool.stages, pool.costs.size())
                          : cost_order_.sort(pool.costs, pool.stages);
    next_.store(0);
  }

  std::span<const task_id_t> next(int /*worker*/) override {
    return take_quantum(order_, next_, quantum_);
  }

  /** Every fetch adds the quantum to the counter, so the counter counts the fetches (a second
   *  shared counter just for statistics would double the contention). */
  std::int64_t shared_calls() const override { return next_.load() / quantum_; }

 private:
  task_id_t quantum_;
  DecreasingCostOrder cost_order_;
  StageOrder stage_order_;
  std::span<const task_id_t> order_;
  alignas(64) std::atomic<task_id_t> next_{0};
};

}  // namespace

std::unique_ptr<SchedulePolicy> make_counter(const PolicyOptions& options) {
  return std::make_unique<CounterPolicy>(options.quantum);
}

}  // namespace tilecc::policies
