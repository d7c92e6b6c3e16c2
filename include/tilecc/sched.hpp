#pragma once
/** @file Scheduling policies: who runs which task, in what order.
 *
 * A policy sees only a task pool (task indices, their costs, and for the NWChem baseline the loop
 * of tile tuples); it knows nothing of tensors. The executor asks it for the next tasks of a
 * worker until it answers with none. Policies are registered by name; an unknown name is refused
 * with the list of valid ones.
 *
 * The registered policies and what each does: policy_names() and policy_description() (the
 * README's policy table is checked against them).
 */
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tilecc/types.hpp"

namespace tilecc {

/** The blocks each task of a pool reads and writes, for a policy that places tasks by where their
 *  data lives. A block id numbers a block among those of every tensor the pool's tasks touch. */
struct TaskBlocks {
  /** Task t touches blocks[offsets[t] .. offsets[t + 1]), each once. */
  std::span<const std::int64_t> offsets{};
  std::span<const std::int64_t> blocks{};
  /** Per entry of `blocks`: 1 where the task writes the block (an output block), 0 where it
   *  reads it (an operand block). */
  std::span<const std::uint8_t> writes{};
  /** Per block id, its bytes. */
  std::span<const std::int64_t> bytes{};
};

/** What a policy schedules: one cost per task, in seconds (estimated, or measured in the
 *  previous run). */
struct TaskPool {
  std::span<const double> costs{};
  /** The TCE loop: one entry per tile tuple the original loop nest visits, holding its task or
   *  -1 for a null tuple. Empty when the plan has no such loop (then every task is one tuple). */
  std::span<const task_id_t> loop{};
  /** How many contractions the tasks come from: the executor counts each one's work apart (the
   *  segments of trace.hpp). Policies ignore it. */
  int segments = 1;
  /** Per task, the stage it belongs to (empty: all in stage 0). A task may have to wait for
   *  tasks of earlier stages (see Executor::run), so policies hand out the tasks of earlier
   *  stages first: stage before cost. */
  std::span<const std::int32_t> stages{};
  /** The pool holds this rank's own tasks (its share, or its placement's): a policy that hands
   *  tasks out through a counter counts on this rank alone, not through the ranks' shared one. */
  bool rank_local = false;
  /** The blocks each task reads and writes; given only to a policy that wants_blocks(), else
   *  null. */
  const TaskBlocks* blocks = nullptr;
};

/** A counter tasks are handed out through (NWChem's NXTVAL). A policy that hands out tasks
 *  through a counter (uses_counter()) takes from PolicyOptions::counter when one is given: a
 *  GlobalCounter (comm.hpp) shared by every rank, which then split the tasks between them. */
class TaskCounter {
 public:
  virtual ~TaskCounter() = default;
  /** Adds n and returns the value before; thread-safe. */
  virtual task_id_t fetch_add(task_id_t n) = 0;
  /** Back to 0 before a run; every party to the counter calls it. */
  virtual void reset() = 0;
};

/** Options every policy accepts; each uses the ones that concern it. */
struct PolicyOptions {
  int quantum = 1;  ///< tasks taken per counter fetch (NWChem's NXTVAL chunk); for `buckets`, the
                    ///< fewest tasks of one of its guided chunks
  int group_size = 0;  ///< workers per bucket; 0: one group per NUMA domain, else per core pair
  /// A contraction whose tasks average at least this many flops runs its tasks one at a time
  /// with a threaded BLAS instead of one task per worker: for a few very large GEMMs, BLAS's
  /// threads (sharing packed panels) beat workers running separate GEMMs that contend for the
  /// shared cache. 0 disables it.
  double blas_parallel_task_flops = 2e9;
  /// The counter of every rank, for a distributed run (null: the policy's own, in this process).
  std::shared_ptr<TaskCounter> counter;
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
  /** Whether the policy hands tasks out through a counter, so that with a counter shared by the
   *  ranks (PolicyOptions::counter) it splits a run between them itself; other policies are given
   *  each rank's share of the tasks beforehand. */
  virtual bool uses_counter() const { return false; }
  /** Whether start() needs the pool's TaskBlocks (listing them costs a pass over every task's
   *  products, so a pool carries them only for a policy that reads them). */
  virtual bool wants_blocks() const { return false; }
};

using PolicyFactory = std::function<std::unique_ptr<SchedulePolicy>(const PolicyOptions&)>;

/** Register a policy under `name` with a one-paragraph description of how its tasks reach
 *  workers (what the docs' policy table and `tilecc info` show); registering a name twice, or
 *  without a description, is an error. */
void register_policy(const std::string& name, PolicyFactory factory, std::string description);
/** Make the policy called `name`; an unknown name raises an error that lists the valid ones, and
 *  invalid options (quantum < 1, group size < 0) are refused. */
std::unique_ptr<SchedulePolicy> make_policy(const std::string& name, const PolicyOptions& options);
std::vector<std::string> policy_names();
/** The description a policy was registered with ("" for an unknown name). */
std::string policy_description(const std::string& name);

/**
 * Task indices by stage (see TaskPool), in index order within a stage: the task list's own order,
 * in which neighbouring tasks of a plan read the same or neighbouring blocks. The order by cost
 * serves the balance between workers only; a worker that runs a share fixed in advance (the static
 * policies), or the one worker of a single-threaded run, takes its tasks in this order instead, and
 * finds their blocks in cache more often (benchmarks/policies/run.py compares the policies).
 *
 * A policy keeps one between runs, with its buffers.
 */
class StageOrder {
 public:
  /** Order `tasks` tasks with these stages (none: all of stage 0); the span stays valid until the
   *  next call. */
  std::span<const task_id_t> sort(std::span<const std::int32_t> stages, std::size_t tasks);

 private:
  std::vector<std::size_t> starts_;
  std::vector<task_id_t> order_;
};
/**
 * Task indices by stage (see TaskPool), then by decreasing cost class, in index order within a
 * class. A class is an eighth of
 * an octave, cut linearly: costs in [2^e (1 + j/8), 2^e (1 + (j+1)/8)) share one, so only tasks
 * whose costs are within 12.5% of each other (6.7% at the top of an octave) keep their index order
 * whatever their costs.
 *
 * Why classes and not an exact sort: a policy orders the tasks of every run anew, and with the
 * costs measured in the run before, the order changes from run to run; a comparison sort then
 * mispredicts a branch at almost every comparison, paid while the other workers wait; this
 * counting sort over the classes has no data-dependent branch. The measured times vary from run
 * to run by more than a class anyway.
 *
 * A policy keeps one between runs, with its buffers: scheduling a small contraction allocates
 * nothing.
 */
class DecreasingCostOrder {
 public:
  /** Order the tasks of `costs` (and `stages`, when not empty); the span stays valid until the
   *  next call. */
  std::span<const task_id_t> sort(std::span<const double> costs,
                                  std::span<const std::int32_t> stages = {});

 private:
  std::vector<std::uint32_t> classes_;
  std::vector<std::size_t> starts_;
  std::vector<task_id_t> order_;
};
/**
 * Longest Processing Time: tasks by decreasing cost (class, see DecreasingCostOrder), each to the
 * bin whose load per unit of capacity is smallest (close to LPT's 4/3-approximation of the
 * optimal makespan for equal capacities; any order keeps list scheduling's 2 - 1/m). Each bin's
 * tasks come out by decreasing cost class.
 *
 * A policy keeps one between runs and its buffers with it: a CC iteration schedules dozens of
 * contractions of a few microseconds of work each, where allocating afresh at every start showed
 * in the time before the first task.
 */
class LptPartition {
 public:
  /** Tasks in the order of DecreasingCostOrder (by `stages` first, when not empty). */
  void assign(std::span<const double> costs, std::span<const int> capacities,
              std::span<const std::int32_t> stages = {});
  std::size_t bins() const { return bins_used_; }
  /** Bin `b`'s tasks by decreasing cost class; valid until the next assign(). */
  std::span<const task_id_t> bin(std::size_t b) const {
    return bins_used_ == 1 ? one_bin_ : std::span<const task_id_t>(bins_[b]);
  }

 private:
  DecreasingCostOrder order_;
  std::span<const task_id_t> one_bin_;  // with one bin: the order itself
  std::vector<std::vector<task_id_t>> bins_;
  std::size_t bins_used_ = 0;
  std::vector<double> load_;
  std::vector<std::pair<double, std::size_t>> heap_;  // (load per unit of capacity, bin)
};

/** The bin of every task under LPT over `bins` bins of equal capacity: every caller given the
 *  same costs gets the same split (what ranks rely on to share tasks without talking). */
std::vector<int> lpt_bins(std::span<const double> costs, int bins);
/**
 * Guided chunks (guided self-scheduling, Polychronopoulos and Kuck, with factoring's halved
 * chunks): cuts `order` into the runs of tasks that a shared counter hands out one per fetch. Each
 * chunk is the longest run from where the last one ended whose cost stays within the cost not yet
 * handed out divided by 2 x `workers`, and holds at least `min_tasks` tasks (or what is left).
 * Over tasks by decreasing cost, large tasks go out alone and the many small ones at the end in
 * shrinking batches: a run of n tasks takes about 2 x workers x ln(n) fetches instead of n, while
 * the last chunks stay single tasks, so the load still evens out at the end.
 *
 * Writes the chunk boundaries into `bounds`: chunk c is order[bounds[c], bounds[c + 1]), so
 * bounds runs from 0 to order.size() and has one entry more than there are chunks.
 */
void guided_chunks(std::span<const double> costs, std::span<const task_id_t> order, int workers,
                   int min_tasks, double most_cost, std::vector<task_id_t>& bounds);
/** Workers per bucket by default: those of one NUMA domain when there are several, else 2. */
int default_group_size(int workers);

}  // namespace tilecc
