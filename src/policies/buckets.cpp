// `buckets` (paper 001's dynamic buckets): LPT assigns the tasks to groups of workers, not to
// workers, and each group drains its share through its own counter. Within a group the variation
// of task times cancels out (the counter balances it), while the counters of different groups
// never contend; workers that share a NUMA domain or a core pair share a bucket.
#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "policies.hpp"

namespace tilecc::policies {
namespace {

class BucketsPolicy final : public SchedulePolicy {
 public:
  BucketsPolicy(int quantum, int group_size) : quantum_(quantum), group_size_(group_size) {}

  void start(const TaskPool& pool, int workers) override {
    size_ = group_size_ > 0 ? std::min(group_size_, workers) : default_group_size(workers);
    const int groups = (workers + size_ - 1) / size_;
    capacities_.clear();
    for (int g = 0; g < groups; ++g) capacities_.push_back(std::min(size_, workers - g * size_));
    tasks_.assign(pool.costs, capacities_);
    if (groups != groups_) {
      counters_ = std::make_unique<Counter[]>(static_cast<std::size_t>(groups));
      groups_ = groups;
    }
    for (int g = 0; g < groups; ++g) counters_[static_cast<std::size_t>(g)].next.store(0);
  }

  std::span<const task_id_t> next(int worker) override {
    const auto g = static_cast<std::size_t>(worker / size_);
    return take_quantum(tasks_.bin(g), counters_[g].next, quantum_);
  }

  /** Every fetch adds the quantum to its group's counter, so the counters count the fetches. */
  std::int64_t shared_calls() const override {
    std::int64_t calls = 0;
    for (std::size_t g = 0; g < tasks_.bins(); ++g) calls += counters_[g].next.load() / quantum_;
    return calls;
  }

 private:
  struct Counter {
    alignas(64) std::atomic<task_id_t> next{0};
  };
  task_id_t quantum_;
  int group_size_;
  int size_ = 1;
  std::vector<int> capacities_;
  LptPartition tasks_;
  int groups_ = 0;
  std::unique_ptr<Counter[]> counters_;
};

}  // namespace

std::unique_ptr<SchedulePolicy> make_buckets(const PolicyOptions& options) {
  return std::make_unique<BucketsPolicy>(options.quantum, options.group_size);
}

}  // namespace tilecc::policies
