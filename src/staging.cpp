#include "tilecc/staging.hpp"

#include <set>
#include <utility>

#include "tilecc/error.hpp"

namespace tilecc {

void check_staging(const Staging& staging, const ContractionPlan& plan) {
  using Key = std::pair<int, slot_t>;
  const auto tasks = static_cast<task_id_t>(plan.tasks().size());
  const BlockShape* shapes[3] = {plan.a().shape.get(), plan.b().shape.get(), plan.c().shape.get()};
  auto keys = [&](const std::vector<StagedBlock>& blocks) {
    std::set<Key> out;
    for (const StagedBlock& b : blocks) {
      const int x = static_cast<int>(b.tensor);
      TILECC_CHECK(x >= 0 && x < 3 && b.slot >= 0 && b.slot < shapes[x]->num_blocks(),
                   "a stage holds block ", b.slot, " of operand ", x,
                   ", which does not exist; stage only blocks of the plan's tensors.");
      out.insert({x, b.slot});
    }
    return out;
  };
  // Each stage's shared blocks and each step's own, once; each task points at its step.
  std::vector<std::set<Key>> shared, own;
  std::vector<std::size_t> stage_of_step;
  std::vector<bool> streamed;
  std::vector<std::int64_t> step_of(static_cast<std::size_t>(tasks), -1);
  for (const Stage& stage : staging) {
    shared.push_back(keys(stage.shared));
    for (const StageStep& step : stage.steps) {
      own.push_back(keys(step.blocks));
      stage_of_step.push_back(shared.size() - 1);
      streamed.push_back(step.streamed);
      for (const task_id_t t : step.tasks) {
        TILECC_CHECK(t >= 0 && t < tasks, "a stage runs task ", t, ", but the plan has ", tasks,
                     " tasks.");
        TILECC_CHECK(step_of[static_cast<std::size_t>(t)] < 0, "a staging runs task ", t,
                     " twice; it must run every task once.");
        step_of[static_cast<std::size_t>(t)] = static_cast<std::int64_t>(own.size() - 1);
      }
    }
  }
  for (task_id_t t = 0; t < tasks; ++t)
    TILECC_CHECK(step_of[static_cast<std::size_t>(t)] >= 0, "a staging never runs task ", t,
                 "; it must run every task once.");
  for_each_task_block(plan, [&](task_id_t t, TaskBlockHypergraph::Tensor tensor, slot_t slot) {
    const auto step = static_cast<std::size_t>(step_of[static_cast<std::size_t>(t)]);
    if (streamed[step] && tensor != TaskBlockHypergraph::Tensor::c) return;
    const Key key{static_cast<int>(tensor), slot};
    TILECC_CHECK(own[step].contains(key) || shared[stage_of_step[step]].contains(key),
                 "a staging runs task ", t, " without holding block ", slot, " of operand ",
                 static_cast<int>(tensor), " that it touches.");
  });
}

}  // namespace tilecc
