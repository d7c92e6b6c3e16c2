#pragma once
/** @file The task–block hypergraph of a plan (paper 004, section 5): what a partitioner needs to
 * place tasks and blocks on ranks, or to stage blocks through a memory budget, so as to move the
 * fewest bytes. */
#include <cstdint>
#include <vector>

#include "tilecc/plan.hpp"

namespace tilecc {

/**
 * A vertex per task of a plan, weighted by its predicted seconds (the model's, as the plan
 * holds them); a net per block that some task
 * reads (of A or B) or writes (of C), weighted by the block's bytes, pinning every task that
 * touches it. A partition's connectivity−1 cut, Σ_nets bytes × (parts the net spans − 1), is the
 * bytes that must move between parts.
 *
 * Nets are ordered A's blocks by slot, then B's, then C's; each net's pins are ascending.
 *
 * @code
 *   const TaskBlockHypergraph h = task_block_hypergraph(plan);
 *   h.pins_of(e);           // the tasks that read or write net e's block
 * @endcode
 */
struct TaskBlockHypergraph {
  enum class Tensor : std::uint8_t { a, b, c };
  struct Net {
    Tensor tensor;
    slot_t slot;
    extent_t bytes;
  };
  std::vector<double> task_weights;       ///< per task: predicted seconds
  std::vector<Net> nets;                  ///< per block read or written
  std::vector<std::int64_t> pin_offsets;  ///< net e pins pins[pin_offsets[e], pin_offsets[e+1])
  std::vector<task_id_t> pins;

  std::span<const task_id_t> pins_of(std::size_t net) const {
    return {pins.data() + pin_offsets[net], pins.data() + pin_offsets[net + 1]};
  }
  /** Σ_nets bytes × (distinct parts among its pins − 1), for a part per task. */
  std::int64_t connectivity_cut(std::span<const int> part_of_task) const;
};

/** visit(task, tensor, slot) for every block each task of `plan` reads (A's and B's, per
 *  product) or writes (C's, per member), task after task, repeats included: the walk the
 *  hypergraph and a task pool's block lists are made from. */
template <class Visit>
void for_each_task_block(const ContractionPlan& plan, Visit&& visit) {
  using Tensor = TaskBlockHypergraph::Tensor;
  const auto& tasks = plan.tasks();
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const auto id = static_cast<task_id_t>(t);
    for (auto m = tasks[t].first_member; m < tasks[t].last_member; ++m) {
      const ContractionPlan::Member& member = plan.members()[static_cast<std::size_t>(m)];
      visit(id, Tensor::c, member.c_slot);
      for (std::int64_t p = member.first; p < member.first + tasks[t].products; ++p) {
        const ContractionPlan::Product& product = plan.products()[static_cast<std::size_t>(p)];
        visit(id, Tensor::a, slot_t{product.a_slot});
        visit(id, Tensor::b, slot_t{product.b_slot});
      }
    }
  }
}

/** The hypergraph of `plan`'s tasks and the blocks they read and write. */
TaskBlockHypergraph task_block_hypergraph(const ContractionPlan& plan);

}  // namespace tilecc
