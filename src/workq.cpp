#include "tilecc/workq.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "tilecc/error.hpp"

namespace tilecc {
namespace {

// Q1: the tasks whose blocks the courier has fetched, taken by the workers in order. A worker
// finding it empty waits for the courier's next delivery (its time shows as scheduling).
class Queue final : public SchedulePolicy {
 public:
  Queue(task_id_t tasks, int depth) : tasks_(tasks), depth_(depth) {}

  void start(const TaskPool& /*pool*/, int workers) override {
    taken_.assign(static_cast<std::size_t>(workers), 0);
  }

  std::span<const task_id_t> next(int worker) override {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !ready_.empty() || done_; });
    if (ready_.empty()) return {};
    task_id_t& mine = taken_[static_cast<std::size_t>(worker)];
    mine = ready_.front();
    ready_.pop_front();
    changed_.notify_all();  // room for the courier
    return {&mine, 1};
  }

  // The courier's side.
  /** Waits for room in the queue; how many tasks may be fetched now (0: the run is over). */
  task_id_t room(task_id_t left) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return static_cast<int>(ready_.size()) < depth_ || done_; });
    if (done_) return 0;
    return std::min<task_id_t>(left, depth_ - static_cast<task_id_t>(ready_.size()));
  }
  void deliver(task_id_t first, task_id_t count) {
    {
      std::lock_guard lock(mutex_);
      for (task_id_t t = first; t < first + count; ++t) ready_.push_back(t);
    }
    changed_.notify_all();
  }
  /** No more deliveries: the workers stop once the queue is empty. */
  void finish() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    changed_.notify_all();
  }
  task_id_t tasks() const { return tasks_; }

 private:
  task_id_t tasks_;
  int depth_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<task_id_t> ready_;
  std::vector<task_id_t> taken_;  // per worker, the task handed out last (next()'s span)
  bool done_ = false;
};

}  // namespace

RunStats run_workq(Executor& executor, const TaskPool& pool, const Executor::Body& body,
                   const Courier& courier) {
  TILECC_CHECK(courier.depth >= 1, "WorkQ's courier must fetch at least one task ahead, not ",
               courier.depth, ".");
  const auto tasks = static_cast<task_id_t>(pool.costs.size());
  Queue queue(tasks, courier.depth);
  std::vector<task_id_t> order(static_cast<std::size_t>(tasks));
  std::iota(order.begin(), order.end(), task_id_t{0});
  std::exception_ptr error;
  std::thread thread([&] {
    try {
      for (task_id_t next = 0; next < tasks;) {
        const task_id_t count = queue.room(tasks - next);
        if (count == 0) break;
        courier.fetch(std::span(order).subspan(static_cast<std::size_t>(next),
                                               static_cast<std::size_t>(count)));
        queue.deliver(next, count);
        next += count;
      }
    } catch (...) {
      error = std::current_exception();
    }
    queue.finish();
  });
  RunStats stats;
  try {
    stats = executor.run(pool, body, queue);
  } catch (...) {
    queue.finish();
    thread.join();
    courier.release();
    throw;
  }
  thread.join();
  courier.release();
  if (error) std::rethrow_exception(error);
  return stats;
}

}  // namespace tilecc
