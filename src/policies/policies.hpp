#pragma once
// The built-in scheduling policies, one file each; sched.cpp registers them by name.
#include <atomic>
#include <memory>

#include "tilecc/sched.hpp"

namespace tilecc::policies {

/** The counter a policy hands its tasks out through: its own atomic, or the ranks' shared one
 *  (PolicyOptions::counter); it counts this process's fetches from it. */
class Tickets {
 public:
  explicit Tickets(std::shared_ptr<TaskCounter> shared) : shared_(std::move(shared)) {}
  /** Before a run (every rank, for a shared counter); `rank_local`: this run counts on this
   *  rank alone (TaskPool::rank_local). */
  void reset(bool rank_local) {
    use_shared_ = shared_ != nullptr && !rank_local;
    if (use_shared_) shared_->reset();
    local_.store(0);
    fetches_.store(0);
  }
  /** `n` numbers: the first of them. */
  task_id_t take(task_id_t n) {
    if (!use_shared_) return local_.fetch_add(n, std::memory_order_relaxed);
    fetches_.fetch_add(1, std::memory_order_relaxed);
    return shared_->fetch_add(n);
  }
  /** This process's fetches in the last run, when each took `per_fetch` numbers. Without a
   *  shared counter they are worked out from the counter (a second atomic just for statistics
   *  would double the contention). */
  std::int64_t fetches(task_id_t per_fetch) const {
    return use_shared_ ? fetches_.load() : local_.load() / per_fetch;
  }

 private:
  std::shared_ptr<TaskCounter> shared_;
  bool use_shared_ = false;
  alignas(64) std::atomic<task_id_t> local_{0};
  alignas(64) std::atomic<std::int64_t> fetches_{0};
};

std::unique_ptr<SchedulePolicy> make_tce(const PolicyOptions& options);
std::unique_ptr<SchedulePolicy> make_counter(const PolicyOptions& options);
std::unique_ptr<SchedulePolicy> make_static_block(const PolicyOptions& options);
std::unique_ptr<SchedulePolicy> make_static_lpt(const PolicyOptions& options);
std::unique_ptr<SchedulePolicy> make_buckets(const PolicyOptions& options);
std::unique_ptr<SchedulePolicy> make_steal(const PolicyOptions& options);

}  // namespace tilecc::policies
