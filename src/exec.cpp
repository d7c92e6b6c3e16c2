#include "tilecc/exec.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "tilecc/blas.hpp"
#include "tilecc/error.hpp"
#include "tilecc/numa.hpp"

namespace tilecc {
namespace {

// A worker holding this many tasks that cannot start yet waits for them rather than fetching
// more: fetching on would take from the other workers the tasks they could run, and leave them
// idle while this one runs everything it hoarded.
constexpr std::size_t most_held = 1;

// Tells the core that this thread is spinning (it yields the pipeline to the other hyperthread).
void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

template <class Ready>
bool spin_until(Ready&& ready) {
  const double until = clock_seconds() + Executor::spin_seconds;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      spin_pause();
    }
    if (clock_seconds() > until) return ready();
  }
}

}  // namespace

SlowWorker SlowWorker::parse(const std::string& text) {
  SlowWorker slow;
  if (text.empty()) return slow;
  const auto colon = text.find(':');
  bool ok = colon != std::string::npos && colon > 0 && colon + 1 < text.size();
  if (ok) {
    try {
      std::size_t used = 0;
      const std::string w = text.substr(0, colon), f = text.substr(colon + 1);
      slow.worker = std::stoi(w, &used);
      ok = used == w.size();
      slow.factor = std::stod(f, &used);
      ok = ok && used == f.size();
    } catch (const std::exception&) {
      ok = false;
    }
  }
  TILECC_CHECK(ok && slow.worker >= 0 && slow.factor >= 1.0 && slow.factor <= 1000.0,
               "TILECC_SLOW_WORKER must be WORKER:FACTOR with a worker number >= 0 and a factor"
               " between 1 and 1000 (e.g. 0:3 makes worker 0 three times slower), got '",
               text, "'.");
  return slow;
}

SlowWorker SlowWorker::from_environment() {
  const char* text = std::getenv("TILECC_SLOW_WORKER");
  return parse(text ? text : "");
}

Executor::Executor(int threads, const std::string& policy, PolicyOptions options, SlowWorker slow)
    : threads_(threads),
      policy_name_(policy),
      options_(options),
      slow_(slow),
      scratch_mode_(scratch_mode_from_environment()) {
  TILECC_CHECK(threads >= 1, "the number of threads must be at least 1, got ", threads, ".");
  const auto hw = static_cast<int>(std::thread::hardware_concurrency());
  TILECC_CHECK(threads <= 1024 && (hw == 0 || threads <= 64 * hw), "asked for ", threads,
               " threads on a machine with ", hw, " hardware threads; use at most ", hw, ".");
  TILECC_CHECK(slow.worker < threads, "TILECC_SLOW_WORKER slows worker ", slow.worker,
               ", but there are only workers 0 to ", threads - 1,
               "; name one of them or unset it.");
  policy_ = make_policy(policy, options);
  for (int w = 0; w < threads; ++w) workspaces_.emplace_back(scratch_mode_);
  timelines_.resize(static_cast<std::size_t>(threads));
  task_times_.resize(static_cast<std::size_t>(threads));
  held_.resize(static_cast<std::size_t>(threads));
  spin_ = hw == 0 || threads <= hw;
  for (int w = 1; w < threads; ++w) pool_.emplace_back([this, w] { worker_loop(w); });
}

bool Executor::policy_wants_blocks() const { return policy_->wants_blocks(); }

bool Executor::policy_uses_counter() const { return policy_->uses_counter(); }

Executor::~Executor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : pool_) t.join();
}

extent_t Executor::scratch_high_water_bytes() const {
  extent_t most = 0;
  for (const Workspace& w : workspaces_) most = std::max(most, w.high_water_bytes());
  return most;
}

double Executor::run_task(task_id_t task, int worker, double t0) {
  WorkerTimeline& clock = timeline(worker);
  // Compute unless the body says otherwise (bodies that are not contractions never do).
  clock.enter_at(Phase::gemm, task, t0);
  (*body_)(task, worker);
  double t1 = clock_seconds();
  if (worker == slow_.worker) {
    // The slowed worker computes on: charged to gemm, as if its core were that much slower.
    clock.enter(Phase::gemm, clock.task());
    const double until = t1 + (slow_.factor - 1.0) * (t1 - t0);
    while ((t1 = clock_seconds()) < until) {
    }
  }
  task_times_[static_cast<std::size_t>(worker)].seconds.emplace_back(task, t1 - t0);
  return t1;
}

void Executor::work(int worker) {
  WorkerTimeline& clock = timeline(worker);
  std::vector<task_id_t>& held = held_[static_cast<std::size_t>(worker)].tasks;
  held.clear();
  bool fetching = true;  // until the policy has no more tasks for this worker
  clock.enter(Phase::schedule);
  while (!failed_.load(std::memory_order_relaxed)) {
    try {
      if (!held.empty() && start_held(worker)) continue;
      if (!fetching || held.size() >= most_held) {
        if (held.empty()) break;
        // Waiting for other workers to finish what the held tasks wait for.
        clock.enter(Phase::wait);
        spin_pause();
        continue;
      }
      const std::span<const task_id_t> tasks = running_policy_->next(worker);
      if (tasks.empty()) {
        fetching = false;
        continue;
      }
      // One clock reading ends a task and starts the next one of the same fetch.
      double now = clock_seconds();
      for (task_id_t t : tasks)
        if (ready_ && !(*ready_)(t))
          held.push_back(t);
        else
          now = run_task(t, worker, now);
      clock.enter_at(Phase::schedule, -1, now);
    } catch (...) {
      fail(std::current_exception());
    }
  }
  clock.enter(Phase::wait);
}

void Executor::fail(std::exception_ptr error) {
  std::lock_guard lock(mutex_);
  if (!failed_.exchange(true)) error_ = std::move(error);
}

bool Executor::start_held(int worker) {
  std::vector<task_id_t>& held = held_[static_cast<std::size_t>(worker)].tasks;
  std::size_t kept = 0;
  double now = 0.0;
  bool started = false;
  for (const task_id_t t : held) {
    if (!(*ready_)(t)) {
      held[kept++] = t;
      continue;
    }
    if (!started) now = clock_seconds();
    started = true;
    now = run_task(t, worker, now);
  }
  held.resize(kept);
  if (started) timeline(worker).enter_at(Phase::schedule, -1, now);
  return started;
}

namespace {

// With several NUMA domains, keep a pool thread on its domain's CPUs (within the process's own
// mask), so that the scratch it touches first stays on its node, and `buckets` groups workers
// that share it. Worker 0, the calling thread, stays where its owner put it.
void pin_to_domain(int worker, int workers) {
  const NumaDomains& numa = NumaDomains::system();
  if (numa.count() < 2) return;
  cpu_set_t allowed, mine;
  CPU_ZERO(&allowed);
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  int kept = 0;
  for (const int cpu : numa.cpus[static_cast<std::size_t>(numa.domain_of(worker, workers))])
    if (cpu < CPU_SETSIZE && CPU_ISSET(cpu, &allowed)) CPU_SET(cpu, &mine), ++kept;
  if (kept > 0) pthread_setaffinity_np(pthread_self(), sizeof mine, &mine);
}

}  // namespace

void Executor::worker_loop(int worker) {
  pin_to_domain(worker, threads_);
  std::uint64_t seen = 0, seen_wakes = 0;
  for (;;) {
    if (!spin_ || !spin_until([&] { return generation_.load() != seen; })) {
      std::unique_lock lock(mutex_);
      wake_.wait(lock,
                 [&] { return stopping_ || generation_.load() != seen || wakes_ != seen_wakes; });
      seen_wakes = wakes_;
      // Woken ahead of a job (wake()): spin for it.
      if (!stopping_ && generation_.load() == seen) continue;
    }
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    seen = generation_.load();
    (*job_)(worker);
    {
      std::lock_guard lock(mutex_);
      active_.fetch_sub(1);
    }
    done_.notify_one();
  }
}

RunStats Executor::collect(task_id_t tasks, double start) {
  RunStats stats;
  stats.tasks = tasks;
  stats.start = start;
  const double end = clock_seconds();
  stats.seconds = end - start;
  for (WorkerTimeline& t : timelines_) {
    t.finish(end);
    stats.phases.push_back(t.seconds());
    const auto& segments = t.segment_seconds();
    stats.segment_phases.resize(segments.size());
    for (std::size_t s = 0; s < segments.size(); ++s)
      for (std::size_t p = 0; p < segments[s].size(); ++p)
        stats.segment_phases[s][p] += segments[s][p];
  }
  stats.task_seconds.assign(static_cast<std::size_t>(run_tasks_), 0.0);
  for (const TaskTimes& times : task_times_)
    for (const auto& [task, seconds] : times.seconds)
      stats.task_seconds[static_cast<std::size_t>(task)] = seconds;
  return stats;
}

double Executor::begin_run(const TaskPool& pool) {
  run_tasks_ = static_cast<task_id_t>(pool.costs.size());
  for (TaskTimes& times : task_times_) times.seconds.clear();
  const double start = clock_seconds();
  for (WorkerTimeline& t : timelines_) t.begin(start, tracing_, pool.segments);
  return start;
}

RunStats Executor::run_with_threaded_blas(const TaskPool& pool, const Body& body) {
  const auto tasks = static_cast<task_id_t>(pool.costs.size());
  const double start = begin_run(pool);
  if (blas::loaded()) blas::set_threads(threads_);
  try {
    run_on_caller(tasks, body);
  } catch (...) {
    if (blas::loaded()) blas::set_threads(1);
    throw;
  }
  if (blas::loaded()) blas::set_threads(1);
  // The other workers' cores are busy inside the BLAS: their time is worker 0's phases again.
  RunStats stats = collect(tasks, start);
  for (std::size_t w = 1; w < stats.phases.size(); ++w) stats.phases[w] = stats.phases[0];
  for (PhaseSeconds& segment : stats.segment_phases)
    for (double& seconds : segment) seconds *= threads_;
  return stats;
}

void Executor::run_on_caller(task_id_t tasks, const Body& body) {
  body_ = &body;
  double now = clock_seconds();
  try {
    for (task_id_t t = 0; t < tasks; ++t) now = run_task(t, 0, now);
  } catch (...) {
    body_ = nullptr;
    throw;
  }
  body_ = nullptr;
  timeline(0).enter_at(Phase::wait, -1, now);
}

void Executor::run_on_workers(const std::function<void(int worker)>& job) {
  failed_.store(false);
  error_ = nullptr;
  {
    std::lock_guard lock(mutex_);
    job_ = &job;
    active_.store(threads_ - 1);
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  job(0);
  if (!spin_ || !spin_until([&] { return active_.load() == 0; })) {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return active_.load() == 0; });
  }
  std::lock_guard lock(mutex_);
  job_ = nullptr;
}

void Executor::wake() {
  if (!spin_ || pool_.empty()) return;
  {
    std::lock_guard lock(mutex_);
    ++wakes_;
  }
  wake_.notify_all();
}

void Executor::for_each(std::int64_t count,
                        const std::function<void(std::int64_t item, int worker)>& item) {
  if (count <= 1 || threads_ == 1) {  // no pool to wake, or not worth waking it for
    for (std::int64_t i = 0; i < count; ++i) item(i, 0);
    return;
  }
  // Each worker takes the items of its own contiguous share in order and then, its share done,
  // the last item of the largest share left. Neighbouring items thus stay on one worker, whose
  // caches hold what they share: a CC update's plans, queued in the order its equations are
  // written, read the same tensors, and taking items in turns split them between the workers.
  // Items are coarse (a plan takes microseconds), so one lock guards the shares.
  std::mutex shares_mutex;
  std::vector<std::pair<std::int64_t, std::int64_t>> shares;  // [first, last) of each worker
  for (std::int64_t w = 0; w < threads_; ++w)
    shares.emplace_back(w * count / threads_, (w + 1) * count / threads_);
  auto next = [&](int worker) -> std::int64_t {
    std::lock_guard lock(shares_mutex);
    auto share = shares.begin() + worker;
    if (share->first == share->second)
      share = std::max_element(shares.begin(), shares.end(), [](const auto& x, const auto& y) {
        return x.second - x.first < y.second - y.first;
      });
    if (share->first == share->second) return -1;
    return share == shares.begin() + worker ? share->first++ : --share->second;
  };
  run_on_workers([&](int worker) {
    while (!failed_.load(std::memory_order_relaxed)) {
      const std::int64_t i = next(worker);
      if (i < 0) return;
      try {
        item(i, worker);
      } catch (...) {
        fail(std::current_exception());
      }
    }
  });
  if (error_) std::rethrow_exception(error_);
}

RunStats Executor::run(const TaskPool& pool, const Body& body, SchedulePolicy& policy) {
  return run_using(policy, pool, body, nullptr);
}

RunStats Executor::run(const TaskPool& pool, const Body& body, const Ready* ready) {
  return run_using(*policy_, pool, body, ready);
}

RunStats Executor::run_using(SchedulePolicy& policy, const TaskPool& pool, const Body& body,
                             const Ready* ready) {
  running_policy_ = &policy;
  const auto tasks = static_cast<task_id_t>(pool.costs.size());
  const double start = begin_run(pool);
  if (tasks == 0) return collect(0, start);
  if (blas::loaded()) blas::set_threads(1);
  // Whatever the policy, one task keeps one worker busy (and waits for no other task). Waking the
  // others only for them to find nothing made the caller wait for the slowest of them to wake and
  // check in, so that a contraction to a scalar (a CC energy) ran slower on two threads than on
  // one. TCE's loop pays its counter for null tuples too, and with a worker slowed which worker
  // runs the task matters: those pools go through the policy.
  if (tasks == 1 && pool.loop.empty() && slow_.worker < 0) {
    run_on_caller(1, body);
    return collect(1, start);
  }
  // Preparing the schedule is the policy's overhead, paid by worker 0 while the others wait.
  timeline(0).enter(Phase::schedule);
  policy.start(pool, threads_);
  {
    std::lock_guard lock(mutex_);
    body_ = &body;
    ready_ = ready;
  }
  run_on_workers([this](int worker) { work(worker); });
  {
    std::lock_guard lock(mutex_);
    body_ = nullptr;
    ready_ = nullptr;
  }
  RunStats stats = collect(tasks, start);
  stats.shared_calls = policy.shared_calls();
  if (error_) std::rethrow_exception(error_);
  return stats;
}

}  // namespace tilecc
