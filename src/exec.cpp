#include "tilecc/exec.hpp"

#include <chrono>

#include "tilecc/blas.hpp"
#include "tilecc/error.hpp"

namespace tilecc {
namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Executor::Executor(int threads, const std::string& policy, PolicyOptions options)
    : threads_(threads), policy_name_(policy), options_(options) {
  TILECC_CHECK(threads >= 1, "the number of threads must be at least 1, got ", threads, ".");
  const auto hw = static_cast<int>(std::thread::hardware_concurrency());
  TILECC_CHECK(threads <= 1024 && (hw == 0 || threads <= 64 * hw), "asked for ", threads,
               " threads on a machine with ", hw, " hardware threads; use at most ", hw, ".");
  policy_ = make_policy(policy, options);
  workspaces_.resize(static_cast<std::size_t>(threads));
  busy_.assign(static_cast<std::size_t>(threads), 0.0);
  for (int w = 1; w < threads; ++w) pool_.emplace_back([this, w] { worker_loop(w); });
}

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

void Executor::work(int worker) {
  double busy = 0.0;
  while (!failed_.load(std::memory_order_relaxed)) {
    const TaskRange r = policy_->next(worker);
    if (r.empty()) break;
    const double t0 = now();
    try {
      for (task_id_t t = r.begin; t < r.end; ++t) (*body_)(t, worker);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!failed_.exchange(true)) error_ = std::current_exception();
    }
    busy += now() - t0;
  }
  busy_[static_cast<std::size_t>(worker)] = busy;
}

void Executor::worker_loop(int worker) {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    work(worker);
    {
      std::lock_guard lock(mutex_);
      --active_;
    }
    done_.notify_one();
  }
}

RunStats Executor::run_with_threaded_blas(std::span<const double> costs, const Body& body) {
  RunStats stats;
  stats.tasks = static_cast<task_id_t>(costs.size());
  stats.busy_seconds.assign(static_cast<std::size_t>(threads_), 0.0);
  if (blas::loaded()) blas::set_threads(threads_);
  const double t0 = now();
  try {
    for (task_id_t t = 0; t < stats.tasks; ++t) body(t, 0);
  } catch (...) {
    if (blas::loaded()) blas::set_threads(1);
    throw;
  }
  if (blas::loaded()) blas::set_threads(1);
  stats.seconds = now() - t0;
  stats.busy_seconds[0] = stats.seconds;
  return stats;
}

RunStats Executor::run(std::span<const double> costs, const Body& body) {
  RunStats stats;
  stats.tasks = static_cast<task_id_t>(costs.size());
  if (costs.empty()) {
    stats.busy_seconds.assign(static_cast<std::size_t>(threads_), 0.0);
    return stats;
  }
  if (blas::loaded()) blas::set_threads(1);
  const double t0 = now();
  policy_->start(costs, threads_);
  failed_.store(false);
  error_ = nullptr;
  {
    std::lock_guard lock(mutex_);
    body_ = &body;
    active_ = threads_ - 1;
    ++generation_;
  }
  wake_.notify_all();
  work(0);
  {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return active_ == 0; });
    body_ = nullptr;
  }
  stats.seconds = now() - t0;
  stats.counter_calls = policy_->counter_calls();
  stats.busy_seconds = busy_;
  if (error_) std::rethrow_exception(error_);
  return stats;
}

}  // namespace tilecc
