// `steal`: each worker owns a deque seeded by LPT (largest tasks at the front) and takes from its
// front without contention; a worker whose deque is empty steals every other task of the fullest
// other deque. Static where the prediction holds, dynamic where it fails.
//
// With stages (TaskPool), a task may wait for tasks of earlier stages, which may sit in another
// worker's deque: a worker whose next task is of a later stage than another deque's front steals
// from that deque first (the earliest stage's tasks only), rather than take a task that would
// wait for them.
#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "policies.hpp"

namespace tilecc::policies {
namespace {

constexpr std::int32_t no_stage = std::numeric_limits<std::int32_t>::max();

class StealPolicy final : public SchedulePolicy {
 public:
  void start(const TaskPool& pool, int workers) override {
    if (workers != workers_) {
      deques_ = std::make_unique<Deque[]>(static_cast<std::size_t>(workers));
      workers_ = workers;
    }
    // A lone worker has no one to steal from or to, and takes the task list's order.
    const bool alone = workers == 1;
    if (!alone) {
      capacities_.assign(static_cast<std::size_t>(workers), 1);
      seeds_.assign(pool.costs, capacities_, pool.stages);
    }
    stages_ = pool.stages;
    for (int w = 0; w < workers; ++w) {
      Deque& d = deques_[static_cast<std::size_t>(w)];
      const std::span<const task_id_t> seed =
          alone ? stage_order_.sort(pool.stages, pool.costs.size())
                : seeds_.bin(static_cast<std::size_t>(w));
      std::lock_guard lock(d.mutex);
      d.items.assign(seed.begin(), seed.end());
      d.head = 0;
      d.lowest_seen = 0;
      publish(d);
    }
    steals_.store(0);
  }

  std::span<const task_id_t> next(int worker) override {
    Deque& own = deques_[static_cast<std::size_t>(worker)];
    for (;;) {
      // Another deque's tasks of an earlier stage than own's front first (any tasks when own is
      // empty), then own's front.
      const std::int32_t front = own.front_stage.load();
      if (steal_into(worker, own, front)) continue;
      if (front == no_stage) return {};
      std::lock_guard lock(own.mutex);
      if (own.head < own.items.size()) {
        const std::span<const task_id_t> task =
            std::span<const task_id_t>(own.items).subspan(own.head++, 1);
        publish(own);
        return task;
      }
    }
  }

  std::int64_t shared_calls() const override { return steals_.load(); }

 private:
  struct Deque {
    alignas(64) std::mutex mutex;
    std::vector<task_id_t> items;  // tasks [head, size()) remain; guarded by mutex
    std::size_t head = 0;
    // Readable without the lock: how many tasks remain, and the stage of the front one
    // (no_stage when none remain). Hints only, hence relaxed: a thief checks them again under the
    // victim's lock before it takes anything.
    std::atomic<std::int64_t> size{0};
    std::atomic<std::int32_t> front_stage{no_stage};
    // Read and written by the deque's owner only: its own front stage when its last scan found
    // nothing to steal, so that no other front was earlier. Fronts never get earlier (a steal
    // moves tasks to another front, never makes earlier ones), so until its own front is later
    // than this a scan would find nothing again.
    std::int32_t lowest_seen = 0;
  };

  std::int32_t stage(task_id_t t) const {
    return stages_.empty() ? 0 : stages_[static_cast<std::size_t>(t)];
  }

  /** Refresh what others read of `d` without its lock (the caller holds it). */
  void publish(Deque& d) const {
    const std::size_t left = d.items.size() - d.head;
    d.size.store(static_cast<std::int64_t>(left), std::memory_order_relaxed);
    d.front_stage.store(left > 0 ? stage(d.items[d.head]) : no_stage, std::memory_order_relaxed);
  }

  // Move every other task of the earliest stage's run at the front of another deque, the first
  // included, to the front of `own`: from the deque whose front stage is earliest, the fullest
  // among equals, and below `below` (own's front stage). False when there is no such deque.
  bool steal_into(int worker, Deque& own, std::int32_t below) {
    // Nothing is earlier than what the last fruitless scan saw (stage 0 at the start), so the
    // scan is skipped: it reads the other deques' counts, which their owners rewrite with every
    // task, and each such read moves a cache line between cores. Loot on its way between two
    // deques is in neither, so a scan may miss it: a steal is missed, and the thief runs it.
    if (below <= own.lowest_seen) return false;
    for (;;) {
      int victim = -1;
      std::int32_t earliest = no_stage;
      std::int64_t most = 0;
      for (int w = 0; w < workers_; ++w) {
        const Deque& d = deques_[static_cast<std::size_t>(w)];
        const std::int32_t s = d.front_stage.load(std::memory_order_relaxed);
        const std::int64_t n = d.size.load(std::memory_order_relaxed);
        // Only an earlier stage than own's is worth taking from another deque.
        if (w == worker || n == 0 || s >= below) continue;
        if (victim < 0 || s < earliest || (s == earliest && n > most)) {
          victim = w;
          earliest = s;
          most = n;
        }
      }
      if (victim < 0) {
        own.lowest_seen = below;  // every other front is at `below` or later
        return false;
      }
      steals_.fetch_add(1, std::memory_order_relaxed);
      std::vector<task_id_t> loot;
      {
        Deque& v = deques_[static_cast<std::size_t>(victim)];
        std::lock_guard lock(v.mutex);
        if (v.head == v.items.size() || stage(v.items[v.head]) != earliest) continue;  // changed
        std::size_t end = v.head + 1;  // the end of the front stage's tasks
        while (end < v.items.size() && stage(v.items[end]) == earliest) ++end;
        // The thief starts the largest now, and both deques still run down to their smallest
        // tasks, which end the run evenly (taking the back half would leave the victim its
        // middle-sized tasks for last).
        std::size_t kept = v.head;
        for (std::size_t i = v.head; i < end; ++i) {
          if ((i - v.head) % 2 == 0)
            loot.push_back(v.items[i]);
          else
            v.items[kept++] = v.items[i];
        }
        v.items.erase(v.items.begin() + static_cast<std::ptrdiff_t>(kept),
                      v.items.begin() + static_cast<std::ptrdiff_t>(end));
        publish(v);
      }
      std::lock_guard lock(own.mutex);
      loot.insert(loot.end(), own.items.begin() + static_cast<std::ptrdiff_t>(own.head),
                  own.items.end());
      own.items.swap(loot);
      own.head = 0;
      publish(own);
      return true;
    }
  }

  std::vector<int> capacities_;
  LptPartition seeds_;
  StageOrder stage_order_;
  std::span<const std::int32_t> stages_;
  std::unique_ptr<Deque[]> deques_;
  int workers_ = 0;
  alignas(64) std::atomic<std::int64_t> steals_{0};
};

}  // namespace

std::unique_ptr<SchedulePolicy> make_steal(const PolicyOptions& /*options*/) {
  return std::make_unique<StealPolicy>();
}

}  // namespace tilecc::policies
