#include "tilecc/workq.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "tilecc/error.hpp"
#include "tilecc/store.hpp"

namespace tilecc {
namespace {

// Q1 and Q2 under one lock, so that the courier waits for either. Q1: the tasks whose blocks the
// courier has fetched, taken by the workers in order; a worker finding it empty waits for the
// courier's next delivery (its time shows as scheduling). Q2: the updates the workers posted,
// which the courier takes all at once.
class Queue final : public SchedulePolicy, public Outbox {
 public:
  explicit Queue(int depth) : depth_(depth) {}

  void start(const TaskPool& /*pool*/, int workers) override {
    taken_.assign(static_cast<std::size_t>(workers), 0);
  }

  std::span<const task_id_t> next(int worker) override {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !ready_.empty() || delivered_all_; });
    if (ready_.empty()) return {};
    task_id_t& mine = taken_[static_cast<std::size_t>(worker)];
    mine = ready_.front();
    ready_.pop_front();
    changed_.notify_all();  // room for the courier
    return {&mine, 1};
  }

  // The courier is not woken for a posted update: it takes them all when it next wakes, for the
  // room a worker's next task leaves in Q1 or at the end of the run, and sends them together.
  // On these oversubscribed cores a wake-up per update costs a worker about what it saves.
  bool post(PostedUpdate&& update) override {
    std::lock_guard lock(mutex_);
    // Room for what the workers post between two of the courier's wake-ups; beyond it a worker
    // sends its own rather than wait.
    if (closed_ || static_cast<int>(posted_.size()) >= 4 * depth_) return false;
    posted_.push_back(std::move(update));
    ++posted_count_;
    return true;
  }

  // The courier's side.
  struct Work {
    task_id_t fetch = 0;  // tasks to fetch for now
    std::vector<PostedUpdate> send;
    bool over = false;  // nothing more will come
  };
  /** Waits for room in Q1 (while `left` tasks are to be fetched), posted updates, or the end of
   *  the run; takes the updates. */
  Work wait(task_id_t left) {
    std::unique_lock lock(mutex_);
    const auto room = [&] {
      return closed_ ? 0
                     : std::min<task_id_t>(left, depth_ - static_cast<task_id_t>(ready_.size()));
    };
    changed_.wait(lock, [&] { return room() > 0 || !posted_.empty() || closed_; });
    Work work{room(), {}, false};
    work.send.swap(posted_);
    work.over = closed_ && work.send.empty();
    return work;
  }
  void deliver(task_id_t first, task_id_t count) {
    {
      std::lock_guard lock(mutex_);
      for (task_id_t t = first; t < first + count; ++t) ready_.push_back(t);
    }
    changed_.notify_all();
  }
  /** No more deliveries: the workers stop once Q1 is empty. */
  void deliver_no_more() {
    {
      std::lock_guard lock(mutex_);
      delivered_all_ = true;
    }
    changed_.notify_all();
  }
  /** The workers are done (nothing more is posted): the courier ends once Q2 is sent. */
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    changed_.notify_all();
  }
  std::int64_t posted() const { return posted_count_; }

 private:
  int depth_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<task_id_t> ready_;
  std::vector<PostedUpdate> posted_;
  std::int64_t posted_count_ = 0;
  std::vector<task_id_t> taken_;  // per worker, the task handed out last (next()'s span)
  bool delivered_all_ = false, closed_ = false;
};

// Sends the updates each store posted, each store's together.
void send(std::vector<PostedUpdate>& updates) {
  std::map<BlockStore*, std::vector<PostedUpdate>> by_store;
  for (PostedUpdate& update : updates) by_store[update.store].push_back(std::move(update));
  for (auto& [store, mine] : by_store) store->send_posted(mine);
}

}  // namespace

RunStats run_workq(Executor& executor, const TaskPool& pool, const Executor::Body& body,
                   const Courier& courier) {
  TILECC_CHECK(courier.depth >= 1, "WorkQ's courier must fetch at least one task ahead, not ",
               courier.depth, ".");
  const auto tasks = static_cast<task_id_t>(pool.costs.size());
  Queue queue(courier.depth);
  std::vector<task_id_t> order(static_cast<std::size_t>(tasks));
  std::iota(order.begin(), order.end(), task_id_t{0});
  std::exception_ptr error;
  if (courier.hand_over) courier.hand_over(&queue);
  std::thread thread([&] {
    try {
      task_id_t next = 0;
      if (next == tasks) queue.deliver_no_more();
      for (;;) {
        Queue::Work work = queue.wait(tasks - next);
        if (!work.send.empty()) send(work.send);
        if (work.over) break;
        if (work.fetch == 0) continue;
        courier.fetch(std::span(order).subspan(static_cast<std::size_t>(next),
                                               static_cast<std::size_t>(work.fetch)));
        queue.deliver(next, work.fetch);
        next += work.fetch;
        if (next == tasks) queue.deliver_no_more();
      }
    } catch (...) {
      error = std::current_exception();
      queue.close();  // the workers send their own updates from now on
    }
    queue.deliver_no_more();  // no worker waits for a delivery that will not come
  });
  const auto finish = [&] {
    queue.close();
    thread.join();
    if (courier.hand_over) courier.hand_over(nullptr);
    courier.release();
  };
  RunStats stats;
  try {
    stats = executor.run(pool, body, queue);
  } catch (...) {
    finish();
    throw;
  }
  finish();
  if (error) std::rethrow_exception(error);
  stats.posted_updates = queue.posted();
  return stats;
}

}  // namespace tilecc
