// `buckets` (paper 001's dynamic buckets): LPT assigns the tasks to groups of workers, not to
// workers, and each group drains its share through its own counter. Within a group the variation
// of task times cancels out (the counter balances it), while the counters of different groups
// never contend; workers that share a NUMA domain or a core pair share a bucket.
//
// A counter hands out guided chunks of its group's tasks (see guided_chunks), not single tasks:
// after decreasing-cost order, a CC iteration's small contractions are mostly tasks of one or two
// microseconds, and a fetch that moves the counter's cache line between cores is then a sizeable
// part of the task. A chunk holds at most chunk_seconds of predicted work: many such fetches'
// worth, while tasks long enough to pay for their own fetch still go out alone.
#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "policies.hpp"

namespace tilecc::policies {
namespace {

constexpr double chunk_seconds = 20e-6;

class BucketsPolicy final : public SchedulePolicy {
 public:
  BucketsPolicy(int quantum, int group_size) : quantum_(quantum), group_size_(group_size) {}

  void start(const TaskPool& pool, int workers) override {
    size_ = group_size_ > 0 ? std::min(group_size_, workers) : default_group_size(workers);
    const int groups = (workers + size_ - 1) / size_;
    capacities_.clear();
    for (int g = 0; g < groups; ++g) capacities_.push_back(std::min(size_, workers - g * size_));
    // A lone worker has no load to balance, and takes the task list's order.
    const bool alone = workers == 1;
    if (!alone) tasks_.assign(pool.costs, capacities_, pool.stages);
    if (chunks_.size() < static_cast<std::size_t>(groups)) {
      chunks_.resize(static_cast<std::size_t>(groups));
      shares_.resize(static_cast<std::size_t>(groups));
    }
    for (int g = 0; g < groups; ++g) {
      const auto b = static_cast<std::size_t>(g);
      shares_[b] = alone ? stage_order_.sort(pool.stages, pool.costs.size()) : tasks_.bin(b);
      guided_chunks(pool.costs, shares_[b], capacities_[b], quantum_, chunk_seconds, chunks_[b]);
    }
    if (groups != groups_) {
      counters_ = std::make_unique<Counter[]>(static_cast<std::size_t>(groups));
      groups_ = groups;
    }
    for (int g = 0; g < groups; ++g) counters_[static_cast<std::size_t>(g)].next.store(0);
  }

  std::span<const task_id_t> next(int worker) override {
    const auto g = static_cast<std::size_t>(worker / size_);
    const std::vector<task_id_t>& bounds = chunks_[g];
    const auto chunk =
        static_cast<std::size_t>(counters_[g].next.fetch_add(1, std::memory_order_relaxed));
    if (chunk + 1 >= bounds.size()) return {};
    return shares_[g].subspan(static_cast<std::size_t>(bounds[chunk]),
                              static_cast<std::size_t>(bounds[chunk + 1] - bounds[chunk]));
  }

  /** Every fetch adds one to its group's counter, so the counters count the fetches. */
  std::int64_t shared_calls() const override {
    std::int64_t calls = 0;
    for (std::size_t g = 0; g < static_cast<std::size_t>(groups_); ++g)
      calls += counters_[g].next.load();
    return calls;
  }

 private:
  struct Counter {
    alignas(64) std::atomic<task_id_t> next{0};
  };
  int quantum_;
  int group_size_;
  int size_ = 1;
  std::vector<int> capacities_;
  LptPartition tasks_;
  StageOrder stage_order_;
  std::vector<std::span<const task_id_t>> shares_;  // per group: its tasks, in the order handed out
  std::vector<std::vector<task_id_t>> chunks_;      // per group: its chunks' bounds in its share
  int groups_ = 0;
  std::unique_ptr<Counter[]> counters_;
};

}  // namespace

std::unique_ptr<SchedulePolicy> make_buckets(const PolicyOptions& options) {
  return std::make_unique<BucketsPolicy>(options.quantum, options.group_size);
}

}  // namespace tilecc::policies
