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
    if (lpt_) {
      capacities_.assign(static_cast<std::size_t>(workers), 1);
      lpt_parts_.assign(pool.costs, capacities_, pool.stages);
      lpt_runs(pool);
    } else {
      block_partition(pool.costs, pool.stages, workers);
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
  static std::int32_t last_stage(std::span<const std::int32_t> stages) {
    std::int32_t last = 0;
    for (const std::int32_t s : stages) last = std::max(last, s);
    return last;
  }
  // visit(t) for every task of `stage`, in index order.
  template <class Visit>
  static void for_each_of_stage(std::span<const std::int32_t> stages, std::int32_t stage,
                                std::size_t tasks, Visit&& visit) {
    for (std::size_t t = 0; t < tasks; ++t)
      if (stages.empty() || stages[t] == stage) visit(t);
  }

  // Per stage, cut its tasks (in index order) where the running cost first reaches w/workers of
  // the stage's total: a later stage's tasks may wait for an earlier stage's, so every worker
  // takes part in every stage.
  void block_partition(std::span<const double> costs, std::span<const std::int32_t> stages,
                       int workers) {
    const std::int32_t last = last_stage(stages);
    for (std::int32_t stage = 0; stage <= last; ++stage) {
      double total = 0.0;
      for_each_of_stage(stages, stage, costs.size(), [&](std::size_t t) { total += costs[t]; });
      double running = 0.0;
      std::size_t seen = 0;
      for_each_of_stage(stages, stage, costs.size(), [&](std::size_t t) {
        // The task goes to the worker whose share contains the task's midpoint.
        const double mid = running + 0.5 * costs[t];
        auto w =
            total > 0.0 ? static_cast<std::size_t>(mid / total * workers) : seen % runs_.size();
        runs_[std::min(w, runs_.size() - 1)].push_back(static_cast<task_id_t>(t));
        running += costs[t];
        ++seen;
      });
    }
  }

  // LPT decides which worker runs a task; a static worker runs all of its tasks whatever their
  // order, so it runs them as static-block does, in the plan's order within each stage, rather
  // than by decreasing cost: neighbouring tasks of a plan read the same or neighbouring blocks,
  // which the order by cost scattered across the run. (At N2 tile 8 on 2 threads, its compute
  // and permute time over static-block's went from 1.11 to 1.07.)
  void lpt_runs(const TaskPool& pool) {
    worker_of_.resize(pool.costs.size());
    for (std::size_t w = 0; w < runs_.size(); ++w)
      for (const task_id_t t : lpt_parts_.bin(w))
        worker_of_[static_cast<std::size_t>(t)] = static_cast<std::int32_t>(w);
    const std::int32_t last = last_stage(pool.stages);
    for (std::int32_t stage = 0; stage <= last; ++stage)
      for_each_of_stage(pool.stages, stage, pool.costs.size(), [&](std::size_t t) {
        runs_[static_cast<std::size_t>(worker_of_[t])].push_back(static_cast<task_id_t>(t));
      });
  }

  bool lpt_;
  // Kept between runs with their storage, as LptPartition explains.
  std::vector<int> capacities_;
  LptPartition lpt_parts_;
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
