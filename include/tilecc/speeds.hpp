#pragma once
/** @file WorkerSpeeds: how fast each worker runs relative to the others, learned from runs. */
#include <span>
#include <vector>

namespace tilecc {

/**
 * Each worker's speed relative to the others (mean 1), from the tasks it ran: the costs they
 * were scheduled with against the seconds they took, summed per worker with older runs fading.
 *
 * Workers share cores with other work (another job, the OS, a host's other virtual machines),
 * so one may run slower than the rest for a while. Knowing by how much lets a hybrid policy give
 * it a smaller share, and lets refinement keep each task's time as a worker of mean speed would
 * have taken it, whichever worker ran it.
 *
 * @code
 *   WorkerSpeeds speeds(2);
 *   speeds.observe(costs, run.task_seconds, run.task_workers);
 *   speeds.speeds();  // e.g. {0.5, 1.5}: worker 0 takes three times as long as worker 1
 * @endcode
 */
class WorkerSpeeds {
 public:
  explicit WorkerSpeeds(int workers);
  /** One run: task t, scheduled with cost costs[t], took seconds[t] on worker workers[t] (-1:
   *  it did not run). All three are per task. */
  void observe(std::span<const double> costs, std::span<const double> seconds,
               std::span<const int> workers);
  /** Relative speeds, mean 1 over the workers that have run tasks; 1 for every worker until two
   *  of them have. */
  std::span<const double> speeds() const { return speeds_; }
  /** Older runs count this much less after each run, so that a change is followed within a few
   *  runs. */
  static constexpr double keep = 0.8;

 private:
  std::vector<double> speeds_, scheduled_, measured_;
};

}  // namespace tilecc
