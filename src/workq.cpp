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
// courier has fetched, taken by the workers in order. Tasks are claimed in the pool's order, by
// the courier (to fetch and deliver) or by a worker that fetches its own blocks (its task's body
// gets them, into the same cache): every worker's first task (the bootstrap get, so that no
// worker waits for the courier's first delivery) and, with role switching, any task a worker
// would otherwise wait for with Q1 empty. A worker that may not claim waits for the courier's
// next delivery (its time shows as scheduling). Q2: the updates the workers posted, which the
// courier takes all at once.
class Queue final : public SchedulePolicy, public Outbox {
 public:
  Queue(int depth, task_id_t tasks, bool switching)
      : depth_(depth), tasks_(tasks), switching_(switching) {}

  void start(const TaskPool& /*pool*/, int workers) override {
    taken_.assign(static_cast<std::size_t>(workers), 0);
    started_.assign(static_cast<std::size_t>(workers), 0);
  }

  std::span<const task_id_t> next(int worker) override {
    const auto w = static_cast<std::size_t>(worker);
    std::unique_lock lock(mutex_);
    const auto may_claim = [&] {
      return claimed_ < tasks_ && !failed_ && ready_.empty() && (!started_[w] || switching_);
    };
    const auto all_delivered = [&] { return failed_ || (claimed_ == tasks_ && in_flight_ == 0); };
    changed_.wait(lock, [&] { return !ready_.empty() || may_claim() || all_delivered(); });
    task_id_t& mine = taken_[w];
    if (may_claim()) {
      started_[w] = 1;
      mine = claimed_++;
      ++self_fetched_;
    } else if (!ready_.empty()) {
      started_[w] = 1;
      mine = ready_.front();
      ready_.pop_front();
    } else {
      return {};
    }
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
    task_id_t first = 0, fetch = 0;  // tasks [first, first + fetch) to fetch for now
    std::vector<PostedUpdate> send;
    bool over = false;  // nothing more will come
  };
  /** Waits for room in Q1 (while tasks are left to claim), posted updates, or the end of the run;
   *  claims the tasks to fetch and takes the updates. */
  Work wait() {
    std::unique_lock lock(mutex_);
    const auto room = [&] {
      return closed_
                 ? 0
                 : std::min<task_id_t>(tasks_ - claimed_,
                                       depth_ - static_cast<task_id_t>(ready_.size()) - in_flight_);
    };
    changed_.wait(lock, [&] { return room() > 0 || !posted_.empty() || closed_; });
    Work work{claimed_, room(), {}, false};
    claimed_ += work.fetch;
    in_flight_ += work.fetch;
    work.send.swap(posted_);
    work.over = closed_ && work.send.empty();
    return work;
  }
  void deliver(task_id_t first, task_id_t count) {
    {
      std::lock_guard lock(mutex_);
      for (task_id_t t = first; t < first + count; ++t) ready_.push_back(t);
      in_flight_ -= count;
    }
    changed_.notify_all();
  }
  /** The courier failed: the workers stop once Q1 is empty. */
  void fail() {
    {
      std::lock_guard lock(mutex_);
      failed_ = true;
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
  std::int64_t self_fetched() const { return self_fetched_; }

 private:
  int depth_;
  task_id_t tasks_;
  bool switching_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<task_id_t> ready_;
  task_id_t claimed_ = 0;    // tasks [0, claimed_) are the courier's or a worker's
  task_id_t in_flight_ = 0;  // claimed by the courier, not yet delivered
  std::vector<PostedUpdate> posted_;
  std::int64_t posted_count_ = 0, self_fetched_ = 0;
  std::vector<task_id_t> taken_;  // per worker, the task handed out last (next()'s span)
  std::vector<char> started_;     // per worker, whether it has had a task
  bool failed_ = false, closed_ = false;
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
  Queue queue(courier.depth, tasks, courier.workers_fetch_when_idle);
  std::vector<task_id_t> order(static_cast<std::size_t>(tasks));
  std::iota(order.begin(), order.end(), task_id_t{0});
  std::exception_ptr error;
  if (courier.hand_over) courier.hand_over(&queue);
  std::thread thread([&] {
    try {
      for (;;) {
        Queue::Work work = queue.wait();
        if (!work.send.empty()) send(work.send);
        if (work.over) break;
        if (work.fetch == 0) continue;
        courier.fetch(std::span(order).subspan(static_cast<std::size_t>(work.first),
                                               static_cast<std::size_t>(work.fetch)));
        queue.deliver(work.first, work.fetch);
      }
    } catch (...) {
      error = std::current_exception();
      queue.close();  // the workers send their own updates from now on
      queue.fail();   // no worker waits for a delivery that will not come
    }
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
  stats.self_fetched_tasks = queue.self_fetched();
  return stats;
}

}  // namespace tilecc
