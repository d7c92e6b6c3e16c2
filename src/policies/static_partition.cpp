// The static policies: every worker's tasks are decided in start(), from the costs alone, and a
// worker takes them all in its first fetch. No shared state is touched while tasks run, so they
// cost nothing to schedule, and they cannot react when a worker turns out slower than predicted.
//  - `static-block`: the task list, in the plan's order, cut into one contiguous run per worker
//    with equal total cost (paper 001's block partitioning);
//  - `static-lpt`: Longest Processing Time on the costs.
// Either way a worker runs its tasks stage by stage, in the plan's order within a stage.
#include <algorithm>
#include <vector>

#include "policies.hpp"

namespace tilecc::policies {
namespace {

class StaticPolicy final : public SchedulePolicy {
 public:
  explicit StaticPolicy(bool lpt) : lpt_(lpt) {}

  void start(const TaskPool& pool, int workers) override {
    runs_.resize(static_cast<std::size_t>(workers));
    for (auto& run : runs_) run.clear();
    const std::span<const task_id_t> order = stage_order_.sort(pool.stages, pool.costs.size());
    if (lpt_) {
      capacities_.assign(static_cast<std::size_t>(workers), 1);
      lpt_parts_.assign(pool.costs, capacities_, pool.stages);
      lpt_runs(order);
    } else {
      block_partition(pool, order, workers);
    }
    taken_.assign(static_cast<std::size_t>(workers), 0);
  }

  std::span<const task_id_t> next(int worker) override {
    const auto w = static_cast<std::size_t>(worker);
    if (taken_[w]) return {};
    taken_[w] = 1;
    return runs_[w];
  }

 private:
  // Per stage, cut its tasks (in index order) where the running cost first reaches w/workers of
  // the stage's total: a later stage's tasks may wait for an earlier stage's, so every worker
  // takes part in every stage.
  void block_partition(const TaskPool& pool, std::span<const task_id_t> order, int workers) {
    auto stage = [&](task_id_t t) {
      return pool.stages.empty() ? 0 : pool.stages[static_cast<std::size_t>(t)];
    };
    auto cost = [&](task_id_t t) { return pool.costs[static_cast<std::size_t>(t)]; };
    for (std::size_t begin = 0, end = 0; begin < order.size(); begin = end) {
      double total = 0.0;
      while (end < order.size() && stage(order[end]) == stage(order[begin]))
        total += cost(order[end++]);
      double running = 0.0;
      for (std::size_t i = begin; i < end; ++i) {
        // The task goes to the worker whose share contains the task's midpoint.
        const double mid = running + 0.5 * cost(order[i]);
        auto w = total > 0.0 ? static_cast<std::size_t>(mid / total * workers)
                             : (i - begin) % runs_.size();
        runs_[std::min(w, runs_.size() - 1)].push_back(order[i]);
        running += cost(order[i]);
      }
    }
  }

  // LPT decides which worker runs a task; each worker runs its share in `order` (see StageOrder:
  // a static worker runs all of its tasks whatever their order).
  void lpt_runs(std::span<const task_id_t> order) {
    worker_of_.resize(order.size());
    for (std::size_t w = 0; w < runs_.size(); ++w)
      for (const task_id_t t : lpt_parts_.bin(w))
        worker_of_[static_cast<std::size_t>(t)] = static_cast<std::int32_t>(w);
    for (const task_id_t t : order)
      runs_[static_cast<std::size_t>(worker_of_[static_cast<std::size_t>(t)])].push_back(t);
  }

  bool lpt_;
  // Kept between runs with their storage, as LptPartition explains.
  std::vector<int> capacities_;
  LptPartition lpt_parts_;
  StageOrder stage_order_;
  std::vector<std::int32_t> worker_of_;       // static-lpt: each task's worker
  std::vector<std::vector<task_id_t>> runs_;  // each worker's tasks, in the order it runs them
  std::vector<char> taken_;                   // written only by the worker it belongs to
};

}  // namespace

std::unique_ptr<SchedulePolicy> make_static_block(const PolicyOptions& /*options*/) {
  return std::make_unique<StaticPolicy>(false);
}
std::unique_ptr<SchedulePolicy> make_static_lpt(const PolicyOptions& /*options*/) {
  return std::make_unique<StaticPolicy>(true);
}

}  // namespace tilecc::policies
