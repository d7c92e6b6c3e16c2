#pragma once
/** @file Executor: a pool of workers that runs a plan's tasks in the order a policy decides. */
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "tilecc/mem.hpp"
#include "tilecc/sched.hpp"

namespace tilecc {

/** What one run of tasks cost. */
struct RunStats {
  task_id_t tasks = 0;
  double seconds = 0.0;              ///< wall time of the run
  std::int64_t counter_calls = 0;    ///< policy fetches
  std::vector<double> busy_seconds;  ///< per worker, time inside task bodies
};

/**
 * A pool of `threads` workers (the calling thread is worker 0, so one thread means no pool) with a
 * scheduling policy. Workers persist between runs; each owns a Workspace.
 *
 * While tasks run, the BLAS is set to one thread: threaded BLAS inside threaded tasks would
 * oversubscribe the cores.
 *
 * @code
 *   Executor ex(2, "counter");
 *   std::vector<double> costs(n, 1.0);
 *   ex.run(costs, [&](task_id_t t, int worker) { work(t, ex.workspace(worker)); });
 * @endcode
 * @warning run() is not reentrant: a task body must not call run() on the same executor.
 */
class Executor {
 public:
  explicit Executor(int threads = 1, const std::string& policy = "counter",
                    PolicyOptions options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  int threads() const { return threads_; }
  const std::string& policy_name() const { return policy_name_; }
  const PolicyOptions& policy_options() const { return options_; }
  Workspace& workspace(int worker) { return workspaces_[static_cast<std::size_t>(worker)]; }
  /** Largest scratch any worker has held, in bytes. */
  extent_t scratch_high_water_bytes() const;

  using Body = std::function<void(task_id_t task, int worker)>;
  /** Run body(t, worker) for every task t, ordered by the policy given the costs. The first
   *  exception thrown by a task stops the run and is rethrown here. */
  RunStats run(std::span<const double> costs, const Body& body);
  /** Run every task in order on the calling thread (worker 0) with a BLAS of threads() threads:
   *  the parallelism is inside each GEMM. */
  RunStats run_with_threaded_blas(std::span<const double> costs, const Body& body);

 private:
  void worker_loop(int worker);
  void work(int worker);

  int threads_;
  std::string policy_name_;
  PolicyOptions options_;
  std::unique_ptr<SchedulePolicy> policy_;
  std::vector<Workspace> workspaces_;
  std::vector<std::thread> pool_;

  // The run in progress, shared with the pool.
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::uint64_t generation_ = 0;
  int active_ = 0;
  bool stopping_ = false;
  const Body* body_ = nullptr;
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
  std::vector<double> busy_;
};

}  // namespace tilecc
