#include "tilecc/hypergraph.hpp"

#include <algorithm>
#include <set>

#include "tilecc/error.hpp"

namespace tilecc {

TaskBlockHypergraph task_block_hypergraph(const ContractionPlan& plan) {
  using Tensor = TaskBlockHypergraph::Tensor;
  const BlockShape* shapes[3] = {plan.a().shape.get(), plan.b().shape.get(), plan.c().shape.get()};
  // Per tensor and slot, the tasks that touch the block (tasks come in order, so each list is
  // ascending as it is built; a repeat is the same task reading the block again).
  std::vector<std::vector<task_id_t>> touching[3];
  for (int x = 0; x < 3; ++x) touching[x].resize(static_cast<std::size_t>(shapes[x]->num_blocks()));
  for_each_task_block(plan, [&](task_id_t task, Tensor tensor, slot_t slot) {
    std::vector<task_id_t>& tasks =
        touching[static_cast<int>(tensor)][static_cast<std::size_t>(slot)];
    if (tasks.empty() || tasks.back() != task) tasks.push_back(task);
  });
  TaskBlockHypergraph h;
  h.task_weights = plan.modelled_seconds();
  h.pin_offsets.push_back(0);
  for (int x = 0; x < 3; ++x)
    for (std::size_t slot = 0; slot < touching[x].size(); ++slot) {
      if (touching[x][slot].empty()) continue;
      const auto s = static_cast<slot_t>(slot);
      h.nets.push_back({static_cast<Tensor>(x), s,
                        shapes[x]->block_size(s) * static_cast<extent_t>(sizeof(double))});
      h.pins.insert(h.pins.end(), touching[x][slot].begin(), touching[x][slot].end());
      h.pin_offsets.push_back(static_cast<std::int64_t>(h.pins.size()));
    }
  return h;
}

std::int64_t TaskBlockHypergraph::connectivity_cut(std::span<const int> part_of_task) const {
  TILECC_CHECK(part_of_task.size() == task_weights.size(), "a partition gives a part for ",
               part_of_task.size(), " tasks, but the hypergraph has ", task_weights.size(), ".");
  std::int64_t cut = 0;
  std::set<int> parts;
  for (std::size_t e = 0; e < nets.size(); ++e) {
    parts.clear();
    for (const task_id_t t : pins_of(e)) parts.insert(part_of_task[static_cast<std::size_t>(t)]);
    cut += nets[e].bytes * static_cast<std::int64_t>(parts.size() - 1);
  }
  return cut;
}

}  // namespace tilecc
