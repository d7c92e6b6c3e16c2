#pragma once
/** @file Executing a ContractionPlan: the per-task pipeline permute -> GEMM -> accumulate. */
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

/** Run `tasks` empty tasks through the executor (to measure per-task dispatch overhead). */
RunStats run_empty_tasks(task_id_t tasks, Executor& executor);

}  // namespace tilecc
