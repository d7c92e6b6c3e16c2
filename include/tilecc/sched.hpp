#pragma once
/** @file Scheduling policies: who runs which task, in what order.
 *
 * A policy sees only task indices and their estimated costs; it knows nothing of tensors. The
 * executor asks it for the next range of tasks for a worker until it answers with an empty range.
 * Policies are registered by name; an unknown name is refused with the list of valid ones.
 */
#include <atomic>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tilecc/types.hpp"

namespace tilecc {

/** Tasks [begin, end) of a plan. */
struct TaskRange {
  task_id_t begin = 0;
  task_id_t end = 0;
  bool empty() const { return begin >= end; }
};

/** Options every policy accepts; each uses the ones that concern it. */
struct PolicyOptions {
  int quantum = 1;  ///< tasks taken per counter fetch (NWChem's NXTVAL chunk)
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
  virtual std::string name() const = 0;
  /** Prepare one run over tasks with these estimated costs (in plan order) on `workers` workers. */
  virtual void start(std::span<const double> costs, int workers) = 0;
  /** The next tasks for `worker`; an empty range when it has none left. Thread-safe. */
  virtual TaskRange next(int worker) = 0;
  /** Shared-counter fetches made in the last run (the cost NXTVAL-style policies pay). */
  virtual std::int64_t counter_calls() const { return 0; }
};

/**
 * `counter`: one shared atomic counter; each fetch takes `quantum` consecutive tasks. The plan
 * orders tasks by decreasing cost, so the counter hands out the big tasks first (a dynamic LPT).
 */
class CounterPolicy final : public SchedulePolicy {
 public:
  explicit CounterPolicy(const PolicyOptions& options);
  std::string name() const override { return "counter"; }
  void start(std::span<const double> costs, int workers) override;
  TaskRange next(int worker) override;
  std::int64_t counter_calls() const override { return calls_.load(); }

 private:
  task_id_t quantum_;
  task_id_t num_tasks_ = 0;
  alignas(64) std::atomic<task_id_t> next_{0};
  alignas(64) std::atomic<std::int64_t> calls_{0};
};

using PolicyFactory = std::function<std::unique_ptr<SchedulePolicy>(const PolicyOptions&)>;

/** Register a policy under `name`; registering a name twice is an error. */
void register_policy(const std::string& name, PolicyFactory factory);
/** Make the policy called `name`; an unknown name raises an error that lists the valid ones. */
std::unique_ptr<SchedulePolicy> make_policy(const std::string& name, const PolicyOptions& options);
std::vector<std::string> policy_names();

}  // namespace tilecc
