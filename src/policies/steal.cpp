// `steal`: each worker owns a deque seeded by LPT (largest tasks at the front) and takes from its
// front without contention; a worker whose deque is empty steals the back half (the smallest
// tasks) of the fullest other deque. Static where the prediction holds, dynamic where it fails.
// With stages (TaskPool), the back half of the victim's earliest stage: later stages may wait for
// it, so a thief taking them would wait for the victim.
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "policies.hpp"

namespace tilecc::policies {
namespace {

class StealPolicy final : public SchedulePolicy {
 public:
  void start(const TaskPool& pool, int workers) override {
    if (workers != workers_) {
      deques_ = std::make_unique<Deque[]>(static_cast<std::size_t>(workers));
      workers_ = workers;
    }
    capacities_.assign(static_cast<std::size_t>(workers), 1);
    seeds_.assign(pool.costs, capacities_, pool.stages);
    stages_ = pool.stages;
    for (int w = 0; w < workers; ++w) {
      Deque& d = deques_[static_cast<std::size_t>(w)];
      const std::span<const task_id_t> seed = seeds_.bin(static_cast<std::size_t>(w));
      d.items.assign(seed.begin(), seed.end());
      d.head = 0;
      d.tail = d.items.size();
      d.size.store(static_cast<std::int64_t>(d.items.size()));
    }
    steals_.store(0);
  }

  std::span<const task_id_t> next(int worker) override {
    Deque& own = deques_[static_cast<std::size_t>(worker)];
    for (;;) {
      {
        std::lock_guard lock(own.mutex);
        if (own.head < own.tail) {
          own.size.fetch_sub(1, std::memory_order_relaxed);
          return std::span<const task_id_t>(own.items).subspan(own.head++, 1);
        }
      }
      if (!steal_into(worker, own)) return {};
    }
  }

  std::int64_t shared_calls() const override { return steals_.load(); }

 private:
  struct Deque {
    alignas(64) std::mutex mutex;
    std::vector<task_id_t> items;
    std::size_t head = 0, tail = 0;     // tasks [head, tail) remain; guarded by mutex
    std::atomic<std::int64_t> size{0};  // tail - head, readable without the lock
  };

  // Move the back half of the fullest other deque (of its earliest stage) into `own` (empty);
  // false when all are empty.
  bool steal_into(int worker, Deque& own) {
    for (;;) {
      int victim = -1;
      std::int64_t most = 0;
      for (int w = 0; w < workers_; ++w) {
        const std::int64_t s = deques_[static_cast<std::size_t>(w)].size.load();
        if (w != worker && s > most) most = s, victim = w;
      }
      if (victim < 0) return false;
      steals_.fetch_add(1, std::memory_order_relaxed);
      std::vector<task_id_t> loot;
      {
        Deque& v = deques_[static_cast<std::size_t>(victim)];
        std::lock_guard lock(v.mutex);
        if (v.head == v.tail) continue;  // drained meanwhile: look again
        std::size_t end = v.head + 1;    // the end of the earliest stage's tasks
        if (stages_.empty())
          end = v.tail;
        else
          while (end < v.tail && stage(v.items[end]) == stage(v.items[v.head])) ++end;
        const std::size_t take = (end - v.head + 1) / 2;
        const auto first = v.items.begin() + static_cast<std::ptrdiff_t>(end - take);
        const auto last = v.items.begin() + static_cast<std::ptrdiff_t>(end);
        loot.assign(first, last);
        v.items.erase(first, last);
        v.tail -= take;
        v.size.fetch_sub(static_cast<std::int64_t>(take), std::memory_order_relaxed);
      }
      std::lock_guard lock(own.mutex);
      own.items = std::move(loot);
      own.head = 0;
      own.tail = own.items.size();
      own.size.store(static_cast<std::int64_t>(own.tail));
      return true;
    }
  }

  std::int32_t stage(task_id_t t) const { return stages_[static_cast<std::size_t>(t)]; }

  std::vector<int> capacities_;
  LptPartition seeds_;
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
