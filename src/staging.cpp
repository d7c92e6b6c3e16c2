#include "tilecc/staging.hpp"

#include <set>
#include <utility>

#include "tilecc/error.hpp"

namespace tilecc {

void check_staging(const Staging& staging, const ContractionPlan& plan) {
  const auto tasks = static_cast<task_id_t>(plan.tasks().size());
  std::vector<int> runs(static_cast<std::size_t>(tasks), 0);
  std::vector<std::set<std::pair<int, slot_t>>> held(static_cast<std::size_t>(tasks));
  const BlockShape* shapes[3] = {plan.a().shape.get(), plan.b().shape.get(), plan.c().shape.get()};
  auto key = [&](const StagedBlock& b) {
    const int x = static_cast<int>(b.tensor);
    TILECC_CHECK(x >= 0 && x < 3 && b.slot >= 0 && b.slot < shapes[x]->num_blocks(),
                 "a stage holds block ", b.slot, " of operand ", x,
                 ", which does not exist; stage only blocks of the plan's tensors.");
    return std::pair{x, b.slot};
  };
  for (const Stage& stage : staging)
    for (const StageStep& step : stage.steps)
      for (const task_id_t t : step.tasks) {
        TILECC_CHECK(t >= 0 && t < tasks, "a stage runs task ", t, ", but the plan has ", tasks,
                     " tasks.");
        ++runs[static_cast<std::size_t>(t)];
        for (const StagedBlock& b : stage.shared) held[static_cast<std::size_t>(t)].insert(key(b));
        for (const StagedBlock& b : step.blocks) held[static_cast<std::size_t>(t)].insert(key(b));
      }
  for (task_id_t t = 0; t < tasks; ++t)
    TILECC_CHECK(runs[static_cast<std::size_t>(t)] == 1, "a staging runs task ", t, " ",
                 runs[static_cast<std::size_t>(t)], " times; it must run every task once.");
  for_each_task_block(plan, [&](task_id_t t, TaskBlockHypergraph::Tensor tensor, slot_t slot) {
    TILECC_CHECK(held[static_cast<std::size_t>(t)].contains({static_cast<int>(tensor), slot}),
                 "a staging runs task ", t, " without holding block ", slot, " of operand ",
                 static_cast<int>(tensor), " that it touches.");
  });
}

}  // namespace tilecc
