#pragma once
/** @file Scheduling policies: who runs which task, in what order.
 *
 * A policy sees only a task pool (task indices, their costs, and for the NWChem baseline the loop
 * of tile tuples); it knows nothing of tensors. The executor asks it for the next tasks of a
 * worker until it answers with none. Policies are registered by name; an unknown name is refused
 * with the list of valid ones.
 *
 * | name           | how tasks reach workers                                                  |
 * |----------------|--------------------------------------------------------------------------|
 * | `tce`          | NWChem TCE: every tile tuple of the loop, null ones included, one shared |
 * |                | counter, the null test after taking a number (the baseline)              |
 * | `counter`      | one shared counter over the tasks by decreasing cost, `quantum` per fetch |
 * | `static-block` | contiguous runs of the task list with equal cost, no counter             |
 * | `static-lpt`   | Longest Processing Time on the costs, no counter                         |
 * | `buckets`      | LPT across groups of workers, a counter per group (paper 001)            |
 * | `steal`        | per-worker deques seeded by LPT; an idle worker steals half a victim's   |
 */
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tilecc/types.hpp"

namespace tilecc {

/** What a policy schedules: one cost per task (estimated, or measured in the previous run). */
struct TaskPool {
  std::span<const double> costs{};
  /** The TCE loop: one entry per tile tuple the original loop nest visits, holding its task or
   *  -1 for a null tuple. Empty when the plan has no such loop (then every task is one tuple). */
  std::span<const task_id_t> loop{};
};

/** Options every policy accepts; each uses the ones that concern it. */
struct PolicyOptions {
  int quantum = 1;     ///< tasks taken per counter fetch (NWChem's NXTVAL chunk)
  int group_size = 0;  ///< workers per bucket; 0: one group per NUMA domain, else per core pair
  /// A contraction whose tasks average at least this many flops runs its tasks one at a time
  /// with a threaded BLAS instead of one task per worker: for a few very large GEMMs, BLAS's
  /// threads (sharing packed panels) beat workers running separate GEMMs that contend for the
  /// shared cache. 0 disables it.
  double blas_parallel_task_flops = 2e9;
};

/** The interface a scheduling policy implements. */
class SchedulePolicy {
 public:
  virtual ~SchedulePolicy() = default;
  /** Prepare one run over `pool` on `workers` workers. */
  virtual void start(const TaskPool& pool, int workers) = 0;
  /** The next tasks for `worker`; empty when it has none left. Thread-safe. The span stays valid
   *  until the next start(). */
  virtual std::span<const task_id_t> next(int worker) = 0;
  /** Operations on shared scheduling state in the last run: counter fetches, steal attempts. */
  virtual std::int64_t shared_calls() const { return 0; }
};

using PolicyFactory = std::function<std::unique_ptr<SchedulePolicy>(const PolicyOptions&)>;

/** Register a policy under `name`; registering a name twice is an error. */
void register_policy(const std::string& name, PolicyFactory factory);
/** Make the policy called `name`; an unknown name raises an error that lists the valid ones, and
 *  invalid options (quantum < 1, group size < 0) are refused. */
std::unique_ptr<SchedulePolicy> make_policy(const std::string& name, const PolicyOptions& options);
std::vector<std::string> policy_names();

/** Task indices by decreasing cost (ties in index order), written into `order`: a policy keeps
 *  the vector between runs, so that scheduling a small contraction allocates nothing. */
void sort_by_decreasing_cost(std::span<const double> costs, std::vector<task_id_t>& order);

/**
 * Longest Processing Time: tasks by decreasing cost, each to the bin whose load per unit of
 * capacity is smallest (a 4/3-approximation of the optimal makespan for equal capacities). Each
 * bin's tasks come out largest first.
 *
 * A policy keeps one between runs and its buffers with it: a CC iteration schedules dozens of
 * contractions of a few microseconds of work each, where allocating afresh at every start showed
 * in the time before the first task.
 */
class LptPartition {
 public:
  void assign(std::span<const double> costs, std::span<const int> capacities);
  std::size_t bins() const { return bins_used_; }
  /** Bin `b`'s tasks, largest first; valid until the next assign(). */
  std::span<const task_id_t> bin(std::size_t b) const { return bins_[b]; }

 private:
  std::vector<task_id_t> order_;
  std::vector<std::vector<task_id_t>> bins_;
  std::size_t bins_used_ = 0;
  std::vector<double> load_;
  std::vector<std::pair<double, std::size_t>> heap_;  // (load per unit of capacity, bin)
};
/** Workers per bucket by default: those of one NUMA domain when there are several, else 2. */
int default_group_size(int workers);

}  // namespace tilecc
