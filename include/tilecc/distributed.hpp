#pragma once
/** @file Tasks run across ranks: each task on exactly one rank, by the policy's counter or by each
 * rank's share, with every rank told every task's time. */
#include <span>

#include "tilecc/comm.hpp"
#include "tilecc/exec.hpp"
#include "tilecc/workq.hpp"

namespace tilecc {

/**
 * Runs the pool's tasks across the ranks, each on one rank (every rank calls it with the same
 * pool): through the ranks' counter when the policy hands tasks out through one
 * (SchedulePolicy::uses_counter), else each rank runs its rank_share() with its own workers. A
 * lone task, and a run with a threaded BLAS (`threaded_blas`), go by the rank share. Tasks wait
 * for none (no Executor::Ready): results must reach shared blocks by atomic accumulates. With a
 * `placement` (the rank of every task) each rank runs the tasks placed on it, and no counter. With
 * a `courier` (WorkQ), each rank's share (or placement) runs through run_workq(), its courier
 * given the tasks' ids in the whole pool, and no counter. The
 * returned task_seconds hold every task's measured time, the same on every rank; the rest of the
 * statistics are this rank's.
 */
RunStats run_across_ranks(Executor& executor, const TaskPool& pool, const Executor::Body& body,
                          const Communicator& comm, bool threaded_blas = false,
                          std::span<const int> placement = {}, const Courier* courier = nullptr);

}  // namespace tilecc
