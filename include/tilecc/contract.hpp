#pragma once
/** @file Executing a ContractionPlan: the per-task pipeline permute -> GEMM -> accumulate. */
#include <span>
#include <vector>

#include "tilecc/comm.hpp"
#include "tilecc/exec.hpp"
#include "tilecc/plan.hpp"
#include "tilecc/schedule.hpp"
#include "tilecc/tensor.hpp"

namespace tilecc {

/** What one execution of a plan did. */
struct ContractStats {
  RunStats run;
  double flops = 0.0;  ///< GEMM flops executed
};

/**
 * C += alpha * A * B as the schedule's plan says. Each task owns one canonical block of C, so
 * tasks never write the same memory and need no locks. The policy schedules with the schedule's
 * costs (the last measured task times when `refine`, else the corrected prediction), and the
 * measured times are kept in the schedule. A, B and C must have the shapes the plan was made for,
 * and C must be a different tensor from A and B.
 *
 * @code
 *   const ContractionPlan plan({c.shape_ptr(), {"i","j","a","b"}, "r2"}, {...}, {...});
 *   Schedule schedule(plan);
 *   Executor ex(2);
 *   contract(schedule, 0.5, t2, v, r2, ex);    // reuse both every iteration
 * @endcode
 */
ContractStats contract(Schedule& schedule, double alpha, const BlockTensor& a, const BlockTensor& b,
                       BlockTensor& c, Executor& executor, bool refine = true);
/** One run of a plan scheduled by its model's predictions, nothing kept: a plan run once. */
ContractStats contract(const ContractionPlan& plan, double alpha, const BlockTensor& a,
                       const BlockTensor& b, BlockTensor& c, Executor& executor);

/** One contraction of a batch: *c += alpha * *a * *b as the schedule's plan says. */
struct BatchItem {
  Schedule* schedule = nullptr;
  double alpha = 1.0;
  const BlockTensor* a = nullptr;
  const BlockTensor* b = nullptr;
  BlockTensor* c = nullptr;
  const ContractionPlan& plan() const { return schedule->plan(); }
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
 * sums (and in the order) of running the items one after another. Each schedule keeps its
 * measured task times as contract() does.
 *
 * With a communicator of several ranks (every rank calls it with the same batch; the tensors'
 * stores are distributed ones, which accumulate every result): a policy that uses a counter
 * (SchedulePolicy::uses_counter, with the ranks' GlobalCounter in its options) splits the tasks
 * between the ranks as it goes; any other policy runs this rank's share, Longest Processing Time
 * over the ranks on the same costs everywhere. The measured task times of all ranks are summed,
 * so every rank keeps the same ones, and every output's writes are complete when it returns. With
 * `workq_depth` > 0, each rank runs its share through WorkQ (workq.hpp): a courier fetches the
 * operand blocks of up to that many of its tasks ahead of the workers. With one item, this is
 * contract(), TCE loop included.
 */
BatchStats contract_batch(std::span<const BatchItem> items, Executor& executor, bool refine = true,
                          const Communicator* comm = nullptr, int workq_depth = 0);

/** Whether `plan` runs on `executor` one task at a time with a threaded BLAS rather than one task
 *  per worker (see PolicyOptions::blas_parallel_task_flops); such a plan runs in no batch. */
bool uses_threaded_blas(const ContractionPlan& plan, const Executor& executor);

/** Run `tasks` empty tasks through the executor (to measure per-task dispatch overhead). */
RunStats run_empty_tasks(task_id_t tasks, Executor& executor);

}  // namespace tilecc
