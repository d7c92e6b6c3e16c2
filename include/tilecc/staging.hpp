#pragma once
/** @file A stage schedule (paper 004, section 6): which blocks of a contraction are in memory
 * while which of its tasks run, so that a contraction whose blocks do not fit in memory runs
 * through disk with its I/O decided once, by whoever computed the schedule (LRU, GetNext,
 * one-level, read-once or two-level partitioning of the plan's task–block hypergraph). */
#include <vector>

#include "tilecc/hypergraph.hpp"
#include "tilecc/plan.hpp"

namespace tilecc {

/** A block of one of a contraction's operands (a, b) or its output (c). */
struct StagedBlock {
  TaskBlockHypergraph::Tensor tensor = TaskBlockHypergraph::Tensor::a;
  slot_t slot = 0;
};

/** Tasks run together with blocks held only while they run (read-once's local blocks). A
 *  streamed step holds only its output blocks: its tasks (one whose blocks outgrow the memory
 *  limit, such as a full reduction to a scalar) read their operand blocks through the store
 *  product by product, each taken in as it is needed and let go when room is. */
struct StageStep {
  std::vector<task_id_t> tasks;
  std::vector<StagedBlock> blocks;
  bool streamed = false;
};

/** Blocks held through all of a stage's steps (read-once's shared blocks, the cut nets), and the
 *  steps. A one-level stage is one step holding every block of its tasks. */
struct Stage {
  std::vector<StagedBlock> shared;
  std::vector<StageStep> steps;
};

/** Stages in the order they run: read in a stage's shared blocks, then for each step its own
 *  blocks, run its tasks, write back and drop its blocks; at the stage's end write back and drop
 *  the shared ones. Empty: no staging (blocks come and go as the store decides). */
using Staging = std::vector<Stage>;

/** Refuses a staging that does not run every task of the plan exactly once, or that runs a task
 *  while a block it reads or writes is not held, with one sentence. */
void check_staging(const Staging& staging, const ContractionPlan& plan);

}  // namespace tilecc
