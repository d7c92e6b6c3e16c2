#pragma once
/** @file Executing a ContractionPlan: the per-task pipeline permute -> GEMM -> accumulate. */
#include <span>
#include <vector>

#include "tilecc/exec.hpp"
#include "tilecc/plan.hpp"
#include "tilecc/tensor.hpp"

namespace tilecc {

/** What one execution of a plan did. */
struct ContractStats {
  RunStats run;
  double flops = 0.0;  ///< GEMM flops executed
};

/**
 * C += alpha * A * B as planned. Each task owns one canonical block of C, so tasks never write the
 * same memory and need no locks. The policy schedules with the plan's costs (the last measured
 * task times when `refine`, else the model's), and the measured times are kept in the plan. A, B
 * and C must have the shapes the plan was made for, and C must be a different tensor from A and B.
 *
 * @code
 *   ContractionPlan plan({c.shape_ptr(), {"i","j","a","b"}, "r2"}, {...}, {...});
 *   Executor ex(2);
 *   contract(plan, 0.5, t2, v, r2, ex);    // reuse `plan` every iteration
 * @endcode
 */
ContractStats contract(ContractionPlan& plan, double alpha, const BlockTensor& a,
                       const BlockTensor& b, BlockTensor& c, Executor& executor,
                       bool refine = true);

/** One contraction of a batch: *c += alpha * *a * *b as *plan says. */
struct BatchItem {
  ContractionPlan* plan = nullptr;
  double alpha = 1.0;
  const BlockTensor* a = nullptr;
  const BlockTensor* b = nullptr;
  BlockTensor* c = nullptr;
};

/** What one execution of a batch did. */
struct BatchStats {
  RunStats run;  ///< all the items' tasks as one run; segment i of run.segment_phases is item i
  std::vector<std::vector<double>> item_task_seconds;  ///< per item, per task of its plan
  std::vector<double> item_flops;                      ///< per item, GEMM flops executed
};

/**
 * Several contractions run as one pool of tasks: a worker done with one contraction's tasks takes
 * another's, instead of waiting for the slowest task of each contraction in turn. No item may read
 * what another writes; items may accumulate into the same output. Tasks of different items that
 * write the same output block are run by one worker, in item order, so C receives exactly the
 * sums (and in the order) of running the items one after another. Each plan keeps its measured
 * task times as contract() does. With one item, this is contract(), TCE loop included.
 */
BatchStats contract_batch(std::span<const BatchItem> items, Executor& executor, bool refine = true);

/** Whether `plan` runs on `executor` one task at a time with a threaded BLAS rather than one task
 *  per worker (see PolicyOptions::blas_parallel_task_flops); such a plan runs in no batch. */
bool uses_threaded_blas(const ContractionPlan& plan, const Executor& executor);

/** Run `tasks` empty tasks through the executor (to measure per-task dispatch overhead). */
RunStats run_empty_tasks(task_id_t tasks, Executor& executor);

}  // namespace tilecc
