#include "tilecc/distributed.hpp"

#include <vector>

#include "tilecc/error.hpp"

namespace tilecc {

RunStats run_across_ranks(Executor& executor, const TaskPool& pool, const Executor::Body& body,
                          const Communicator& comm, bool threaded_blas,
                          std::span<const int> placement, const Courier* courier) {
  const std::size_t tasks = pool.costs.size();
  TILECC_CHECK(placement.empty() || placement.size() == tasks, "a placement of ", placement.size(),
               " tasks given to a run of ", tasks, " tasks.");
  const bool through_counter = placement.empty() && courier == nullptr &&
                               executor.policy_uses_counter() && tasks > 1 && !threaded_blas;
  RunStats stats;
  std::vector<task_id_t> share;
  if (through_counter) {
    stats = executor.run(pool, body);
  } else {
    if (placement.empty()) {
      share = rank_share(pool.costs, comm);
    } else {
      for (std::size_t t = 0; t < tasks; ++t) {
        TILECC_CHECK(placement[t] < comm.size(), "a placement puts a task on rank ", placement[t],
                     " of a run on ", comm.size(), " ranks.");
        if (placement[t] == comm.rank()) share.push_back(static_cast<task_id_t>(t));
      }
    }
    std::vector<double> costs;
    for (const task_id_t t : share) costs.push_back(pool.costs[static_cast<std::size_t>(t)]);
    TaskPool mine{costs, {}, pool.segments, {}};
    mine.rank_local = true;
    const Executor::Body run_share = [&](task_id_t t, int worker) {
      body(share[static_cast<std::size_t>(t)], worker);
    };
    if (threaded_blas) {
      stats = executor.run_with_threaded_blas(mine, run_share);
    } else if (courier != nullptr && share.size() > 1) {
      Courier ours = *courier;  // given this rank's tasks by their ids in the whole pool
      std::vector<task_id_t> ids;
      ours.fetch = [&](std::span<const task_id_t> local) {
        ids.clear();
        for (const task_id_t t : local) ids.push_back(share[static_cast<std::size_t>(t)]);
        courier->fetch(ids);
      };
      stats = run_workq(executor, mine, run_share, ours);
    } else {
      stats = executor.run(mine, run_share);
    }
  }
  // Each task ran on one rank, so the sum over the ranks is every task's time.
  std::vector<double> seconds(tasks, 0.0);
  if (through_counter)
    seconds = stats.task_seconds;
  else
    for (std::size_t t = 0; t < share.size(); ++t)
      seconds[static_cast<std::size_t>(share[t])] = stats.task_seconds[t];
  comm.sum(seconds);
  stats.task_seconds = std::move(seconds);
  return stats;
}

}  // namespace tilecc
