// `counter`: the inspector's tasks (null tuples already gone) behind one shared counter. Tasks go
// out by decreasing cost, `quantum` per fetch, so the counter acts as a dynamic LPT: the big tasks
// start first and the small ones fill the gaps at the end.
#include <algorithm>
#include <atomic>
#include <vector>

#include "policies.hpp"

namespace tilecc::policies {
namespace {

class CounterPolicy final : public SchedulePolicy {
 public:
  explicit CounterPolicy(int quantum) : quantum_(quantum) {}

  void start(const TaskPool& pool, int /*workers*/) override {
    order_ = by_decreasing_cost(pool.costs);
    next_.store(0);
    calls_.store(0);
  }

  std::span<const task_id_t> next(int /*worker*/) override {
    calls_.fetch_add(1, std::memory_order_relaxed);
    return take_quantum(order_, next_, quantum_);
  }

  std::int64_t shared_calls() const override { return calls_.load(); }

 private:
  task_id_t quantum_;
  std::vector<task_id_t> order_;
  alignas(64) std::atomic<task_id_t> next_{0};
  alignas(64) std::atomic<std::int64_t> calls_{0};
};

}  // namespace

std::unique_ptr<SchedulePolicy> make_counter(const PolicyOptions& options) {
  return std::make_unique<CounterPolicy>(options.quantum);
}

}  // namespace tilecc::policies
