// The static policies: every worker's tasks are decided in start(), from the costs alone, and a
// worker takes them all in its first fetch. No shared state is touched while tasks run, so they
// cost nothing to schedule, and they cannot react when a worker turns out slower than predicted.
//  - `static-block`: the task list, in the plan's order, cut into one contiguous run per worker
//    with equal total cost (paper 001's block partitioning);
//  - `static-lpt`: Longest Processing Time on the costs.
#include <algorithm>
#include <vector>

#include "policies.hpp"

namespace tilecc::policies {
namespace {

class StaticPolicy final : public SchedulePolicy {
 public:
  explicit StaticPolicy(bool lpt) : lpt_(lpt) {}

  void start(const TaskPool& pool, int workers) override {
    if (lpt_) {
      capacities_.assign(static_cast<std::size_t>(workers), 1);
      lpt_parts_.assign(pool.costs, capacities_, pool.stages);
    } else {
      block_partition(pool.costs, pool.stages, workers);
    }
    taken_.assign(static_cast<std::size_t>(workers), 0);
  }

  std::span<const task_id_t> next(int worker) override {
    const auto w = static_cast<std::size_t>(worker);
    if (taken_[w]) return {};
    taken_[w] = 1;
    return lpt_ ? lpt_parts_.bin(w) : std::span<const task_id_t>(blocks_[w]);
  }

 private:
  // Per stage, cut its tasks (in index order) where the running cost first reaches w/workers of
  // the stage's total: a later stage's tasks may wait for an earlier stage's, so every worker
  // takes part in every stage.
  void block_partition(std::span<const double> costs, std::span<const std::int32_t> stages,
                       int workers) {
    blocks_.resize(static_cast<std::size_t>(workers));
    for (auto& part : blocks_) part.clear();
    std::int32_t last_stage = 0;
    for (const std::int32_t s : stages) last_stage = std::max(last_stage, s);
    for (std::int32_t stage = 0; stage <= last_stage; ++stage) {
      auto in_stage = [&](std::size_t t) { return stages.empty() || stages[t] == stage; };
      double total = 0.0;
      for (std::size_t t = 0; t < costs.size(); ++t)
        if (in_stage(t)) total += costs[t];
      double running = 0.0;
      std::size_t seen = 0;
      for (std::size_t t = 0; t < costs.size(); ++t) {
        if (!in_stage(t)) continue;
        // The task goes to the worker whose share contains the task's midpoint.
        const double mid = running + 0.5 * costs[t];
        auto w =
            total > 0.0 ? static_cast<std::size_t>(mid / total * workers) : seen % blocks_.size();
        blocks_[std::min(w, blocks_.size() - 1)].push_back(static_cast<task_id_t>(t));
        running += costs[t];
        ++seen;
      }
    }
  }

  bool lpt_;
  // Kept between runs with their storage, as LptPartition explains.
  std::vector<int> capacities_;
  LptPartition lpt_parts_;
  std::vector<std::vector<task_id_t>> blocks_;
  std::vector<char> taken_;  // written only by the worker it belongs to
};

}  // namespace

std::unique_ptr<SchedulePolicy> make_static_block(const PolicyOptions& /*options*/) {
  return std::make_unique<StaticPolicy>(false);
}
std::unique_ptr<SchedulePolicy> make_static_lpt(const PolicyOptions& /*options*/) {
  return std::make_unique<StaticPolicy>(true);
}

}  // namespace tilecc::policies
