#pragma once
/** @file Executor: a pool of workers that runs a plan's tasks in the order a policy decides. */
#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tilecc/mem.hpp"
#include "tilecc/sched.hpp"
#include "tilecc/trace.hpp"

namespace tilecc {

/** What one run of tasks cost. */
struct RunStats {
  task_id_t tasks = 0;
  double start = 0.0;                ///< steady-clock time the run began (clock_seconds())
  double seconds = 0.0;              ///< wall time of the run
  std::int64_t shared_calls = 0;     ///< the policy's counter fetches / steal attempts
  std::vector<PhaseSeconds> phases;  ///< per worker; each adds up to `seconds`
  /// Per segment (TaskPool::segments), summed over workers: the part of `phases` spent working
  /// for it. Fetching and waiting are the run's, in no segment.
  std::vector<PhaseSeconds> segment_phases;
  std::vector<double> task_seconds;  ///< per task, measured (what refinement feeds back)
  std::int64_t posted_updates = 0;   ///< updates the workers handed to WorkQ's courier (Q2)
  /// WorkQ's tasks whose workers fetched their own blocks (their first, and those role
  /// switching gave them), not the courier.
  std::int64_t self_fetched_tasks = 0;
};

/** A worker made slower on purpose, to study static vs dynamic scheduling on a quiet machine:
 *  worker `worker` takes `factor` times as long for every task. */
struct SlowWorker {
  int worker = -1;  ///< -1: none
  double factor = 1.0;
  /** Parse "k:factor" (e.g. "0:3"); an empty text means none. Refuses anything else. */
  static SlowWorker parse(const std::string& text);
  /** From $TILECC_SLOW_WORKER. */
  static SlowWorker from_environment();
};

/**
 * A pool of `threads` workers (the calling thread is worker 0, so one thread means no pool) with a
 * scheduling policy. Workers persist between runs; each owns a Workspace and a timeline that
 * charges its time to phases (see trace.hpp).
 *
 * While tasks run, the BLAS is set to one thread: threaded BLAS inside threaded tasks would
 * oversubscribe the cores.
 *
 * @code
 *   Executor ex(2, "counter");
 *   std::vector<double> costs(n, 1.0);
 *   ex.run({costs}, [&](task_id_t t, int worker) { work(t, ex.workspace(worker)); });
 * @endcode
 * @warning run() is not reentrant: a task body must not call run() on the same executor.
 */
class Executor {
 public:
  explicit Executor(int threads = 1, const std::string& policy = "counter",
                    PolicyOptions options = {}, SlowWorker slow = SlowWorker::from_environment());
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /** How long a waiting thread spins before it sleeps, as OpenMP runtimes do (KMP_BLOCKTIME,
   *  GOMP_SPINCOUNT): a spinning worker starts in well under a microsecond, while waking a sleeping
   *  one can take hundreds of microseconds on a virtual machine, whose idle vCPU the host must
   *  schedule again. The Python between two contractions of a CC iteration often takes more than
   *  100 us, so the wait is long enough to cover it. */
  static constexpr double spin_seconds = 2e-3;

  int threads() const { return threads_; }
  const std::string& policy_name() const { return policy_name_; }
  const PolicyOptions& policy_options() const { return options_; }
  /** Whether the policy schedules by the blocks tasks read and write (TaskPool::blocks). */
  bool policy_wants_blocks() const;
  /** Whether the policy hands tasks out through a counter (SchedulePolicy::uses_counter). */
  bool policy_uses_counter() const;
  const SlowWorker& slow_worker() const { return slow_; }
  Workspace& workspace(int worker) { return workspaces_[static_cast<std::size_t>(worker)]; }
  /** The phase clock of `worker`: a task body calls enter() when its work changes kind. */
  WorkerTimeline& timeline(int worker) { return timelines_[static_cast<std::size_t>(worker)]; }
  /** Largest scratch any worker has held, in bytes. */
  extent_t scratch_high_water_bytes() const;
  ScratchMode scratch_mode() const { return scratch_mode_; }
  /** Keep every phase slice of the next runs (for a trace); off by default. */
  void set_tracing(bool on) { tracing_ = on; }
  bool tracing() const { return tracing_; }

  using Body = std::function<void(task_id_t task, int worker)>;
  /** Whether a task may start now (it may have to wait for tasks of other workers). */
  using Ready = std::function<bool(task_id_t task)>;
  /** Run body(t, worker) for every task t of the pool, ordered by the policy. With `ready`, a task
   *  handed out before it is ready is held by its worker, which goes on with the next tasks and
   *  starts the held ones as soon as they are ready. A worker holding such a task fetches no
   *  more, so the run ends only if the tasks a task waits for are in earlier stages
   *  (TaskPool::stages), which every policy hands out first. The first exception thrown by a
   *  task stops the run and is rethrown here. A pool of one task (without a TCE loop, and with
   *  no worker slowed) runs on the calling thread, as worker 0, without waking the others. */
  RunStats run(const TaskPool& pool, const Body& body, const Ready* ready = nullptr);
  /** run(), with `policy` handing out this run's tasks instead of the executor's own: a
   *  dispenser made for one run (WorkQ's queue, workq.hpp). */
  RunStats run(const TaskPool& pool, const Body& body, SchedulePolicy& policy);
  /** Run every task in order on the calling thread (worker 0) with a BLAS of threads() threads:
   *  the parallelism is inside each GEMM. */
  RunStats run_with_threaded_blas(const TaskPool& pool, const Body& body);
  /** Run item(i, worker) for every i in [0, count) on the workers (a single item, or every item
   *  of a one-worker executor, runs on the calling thread, in order): for work that is not a
   *  plan's tasks (no policy, no timeline), such as building plans. Each worker runs the items
   *  of its own contiguous share of [0, count) in order, then helps with the largest share left,
   *  from its end. The first exception an item throws stops the others and is rethrown here. */
  void for_each(std::int64_t count, const std::function<void(std::int64_t item, int worker)>& item);
  /** Wake the sleeping workers to spin, for up to spin_seconds, for the next run or for_each: a
   *  sleeping worker takes tens of microseconds to start (more on a virtual machine), which the
   *  job would wait for. For a caller that knows work is coming and has some of its own to do
   *  first (a deferred queue, converting its plan requests); does nothing where workers do not
   *  spin. */
  void wake();

 private:
  void worker_loop(int worker);
  /** Run job(worker) on every worker, the calling thread being worker 0, and wait for them all. */
  void run_on_workers(const std::function<void(int worker)>& job);
  /** Keep the first exception of a run (any worker's) to rethrow, and stop the others. */
  void fail(std::exception_ptr error);
  void work(int worker);
  RunStats run_using(SchedulePolicy& policy, const TaskPool& pool, const Body& body,
                     const Ready* ready);
  /** Run tasks 0 .. tasks - 1 in order on the calling thread, as worker 0. */
  void run_on_caller(task_id_t tasks, const Body& body);
  /** Start the tasks `worker` holds that are ready; whether there were any. */
  bool start_held(int worker);
  /** Run one task that starts at clock reading `start`; returns the reading at its end. */
  double run_task(task_id_t task, int worker, double start);
  /** Clear the task times and start every worker's clock; returns the start time. */
  double begin_run(const TaskPool& pool);
  RunStats collect(task_id_t tasks, double start);

  int threads_;
  std::string policy_name_;
  PolicyOptions options_;
  SlowWorker slow_;
  std::unique_ptr<SchedulePolicy> policy_;
  SchedulePolicy* running_policy_ = nullptr;  // the policy of the run in progress
  ScratchMode scratch_mode_;
  std::vector<Workspace> workspaces_;
  std::vector<WorkerTimeline> timelines_;
  std::vector<std::thread> pool_;
  bool tracing_ = false;

  // The run in progress, shared with the pool.
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  // Atomic so that waiting can spin briefly before it sleeps: contractions come in quick
  // succession, and waking a sleeping thread costs microseconds per run.
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> active_{0};
  std::uint64_t wakes_ = 0;  ///< calls to wake(), under mutex_
  bool spin_ = true;         ///< false when there are more workers than cores
  bool stopping_ = false;
  const std::function<void(int worker)>* job_ = nullptr;
  const Body* body_ = nullptr;
  const Ready* ready_ = nullptr;
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
  /** One worker's measured task times in the run in progress, merged into
   *  RunStats::task_seconds at its end. Kept per worker, a cache line apart, because consecutive
   *  tasks run on different workers: one shared array would have them write the same lines. */
  struct alignas(64) TaskTimes {
    std::vector<std::pair<task_id_t, double>> seconds;
  };
  std::vector<TaskTimes> task_times_;
  /** Tasks a worker was handed before they were ready (see run()). */
  struct alignas(64) HeldTasks {
    std::vector<task_id_t> tasks;
  };
  std::vector<HeldTasks> held_;
  task_id_t run_tasks_ = 0;
};

}  // namespace tilecc
