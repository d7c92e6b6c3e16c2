#include "tilecc/sched.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

#include "policies/policies.hpp"
#include "tilecc/error.hpp"
#include "tilecc/numa.hpp"

namespace tilecc {
namespace {

struct Registered {
  PolicyFactory factory;
  std::string description;
};

struct Registry {
  std::mutex mutex;
  std::map<std::string, Registered> policies;
};

Registry& registry() {
  // Never destroyed: policies may be made during static destruction of other objects. The
  // descriptions are the ones the README's policy table and `tilecc info` show.
  static Registry* r = [] {
    auto* reg = new Registry;
    reg->policies["tce"] = {
        policies::make_tce,
        "NWChem TCE as it was, the baseline: every tile tuple of the loop in loop order, null "
        "ones included, one shared counter, the null test made after taking a number, no "
        "stacking"};
    reg->policies["counter"] = {
        policies::make_counter,
        "the inspector's tasks by decreasing cost through one shared counter, `quantum` per "
        "fetch"};
    reg->policies["static-block"] = {
        policies::make_static_block,
        "the task list cut into one contiguous run per worker of equal predicted cost"};
    reg->policies["static-lpt"] = {
        policies::make_static_lpt,
        "Longest Processing Time on the predicted costs; each worker runs its tasks in the "
        "plan's order"};
    reg->policies["buckets"] = {
        policies::make_buckets,
        "LPT across groups of workers (a NUMA domain, else a core pair), a counter per group "
        "that hands out guided chunks: the many small tasks at the end go out several per "
        "fetch (up to 20 µs of predicted work, and at most the work left over twice the "
        "group's workers), the last ones alone"};
    reg->policies["steal"] = {
        policies::make_steal,
        "per-worker deques seeded by LPT; an idle worker steals every other task of the "
        "fullest deque (the largest first, so both deques still end on their smallest tasks), "
        "and a worker whose next task is of a later stage than another deque's front (in a "
        "batch of contractions, where it would wait for that stage) steals from that deque "
        "first"};
    return reg;
  }();
  return *r;
}

// How many stages `stages` numbers (one when it is empty: every task is of stage 0).
std::size_t stage_count(std::span<const std::int32_t> stages) {
  std::size_t count = 1;
  for (const std::int32_t s : stages) count = std::max(count, static_cast<std::size_t>(s) + 1);
  return count;
}

// Tasks 0..tasks-1 into `order` by rank(t) (below `ranks`), in index order within a rank: a
// counting sort, with `starts` as its working memory.
template <class Rank>
void sort_by_rank(std::size_t tasks, std::size_t ranks, Rank rank, std::vector<std::size_t>& starts,
                  std::vector<task_id_t>& order) {
  starts.assign(ranks + 1, 0);
  for (std::size_t t = 0; t < tasks; ++t) ++starts[rank(t) + 1];
  std::partial_sum(starts.begin(), starts.end(), starts.begin());
  order.resize(tasks);
  for (std::size_t t = 0; t < tasks; ++t) order[starts[rank(t)]++] = static_cast<task_id_t>(t);
}

}  // namespace

void register_policy(const std::string& name, PolicyFactory factory, std::string description) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  TILECC_CHECK(!description.empty(), "the scheduling policy '", name,
               "' needs a description of how its tasks reach workers.");
  TILECC_CHECK(!r.policies.contains(name), "a scheduling policy called '", name,
               "' is already registered; choose another name.");
  r.policies.emplace(name, Registered{std::move(factory), std::move(description)});
}

std::vector<std::string> policy_names() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, registered] : r.policies) names.push_back(name);
  return names;
}

std::string policy_description(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const auto it = r.policies.find(name);
  return it == r.policies.end() ? std::string() : it->second.description;
}

std::unique_ptr<SchedulePolicy> make_policy(const std::string& name, const PolicyOptions& options) {
  PolicyFactory factory;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.policies.find(name);
    if (it != r.policies.end()) factory = it->second.factory;
  }
  if (!factory) {
    TILECC_CHECK(false, "unknown scheduling policy '", name,
                 "'; valid policies are: ", detail::join(policy_names(), ", "), ".");
  }
  TILECC_CHECK(options.quantum >= 1,
               "the scheduling quantum is the number of tasks taken per counter fetch and must be"
               " at least 1, got ",
               options.quantum, ".");
  TILECC_CHECK(options.group_size >= 0,
               "the bucket group size is a number of workers and must be at least 1 (or 0 for"
               " one group per NUMA domain or core pair), got ",
               options.group_size, ".");
  return factory(options);
}

std::span<const task_id_t> StageOrder::sort(std::span<const std::int32_t> stages,
                                            std::size_t tasks) {
  auto stage = [&](std::size_t t) {
    return stages.empty() ? std::size_t{0} : static_cast<std::size_t>(stages[t]);
  };
  sort_by_rank(tasks, stage_count(stages), stage, starts_, order_);
  return order_;
}

std::span<const task_id_t> DecreasingCostOrder::sort(std::span<const double> costs,
                                                     std::span<const std::int32_t> stages) {
  const std::size_t n = costs.size();
  classes_.resize(n);
  order_.resize(n);
  // A positive double's bits order like the double: the sign bit (0), the 11 exponent bits and
  // the top 3 mantissa bits number its class. Zero, negative and NaN costs go to class 0.
  std::uint32_t lowest = ~std::uint32_t{0}, highest = 0;
  for (std::size_t t = 0; t < n; ++t) {
    const double cost = costs[t] > 0.0 ? costs[t] : 0.0;
    const auto c = static_cast<std::uint32_t>(std::bit_cast<std::uint64_t>(cost) >> 49);
    classes_[t] = c;
    lowest = std::min(lowest, c);
    highest = std::max(highest, c);
  }
  if (n == 0) return order_;
  // Ranks run stage by stage and, within a stage, from the highest class down.
  const std::size_t width = static_cast<std::size_t>(highest - lowest) + 1;
  auto rank = [&](std::size_t t) {
    const std::size_t stage = stages.empty() ? 0 : static_cast<std::size_t>(stages[t]);
    return stage * width + (highest - classes_[t]);
  };
  sort_by_rank(n, stage_count(stages) * width, rank, starts_, order_);
  return order_;
}

std::vector<int> lpt_bins(std::span<const double> costs, int bins) {
  LptPartition lpt;
  const std::vector<int> capacities(static_cast<std::size_t>(bins), 1);
  lpt.assign(costs, capacities);
  std::vector<int> bin_of(costs.size(), 0);
  for (std::size_t b = 0; b < lpt.bins(); ++b)
    for (const task_id_t t : lpt.bin(b)) bin_of[static_cast<std::size_t>(t)] = static_cast<int>(b);
  return bin_of;
}

void LptPartition::assign(std::span<const double> costs, std::span<const int> capacities,
                          std::span<const std::int32_t> stages) {
  bins_used_ = capacities.size();
  if (bins_used_ == 1) {  // one bin takes every task, in the order
    one_bin_ = order_.sort(costs, stages);
    return;
  }
  if (bins_.size() < bins_used_) bins_.resize(bins_used_);
  load_.assign(bins_used_, 0.0);
  heap_.clear();
  for (std::size_t b = 0; b < bins_used_; ++b) {
    bins_[b].clear();
    heap_.emplace_back(0.0, b);  // all loads equal: already a heap
  }
  // A min-heap: the least loaded bin, the lowest-numbered among equals, at the front.
  const std::greater<> later;
  for (task_id_t t : order_.sort(costs, stages)) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const std::size_t b = heap_.back().second;
    bins_[b].push_back(t);
    load_[b] += costs[static_cast<std::size_t>(t)];
    heap_.back().first = load_[b] / capacities[b];
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
}

void guided_chunks(std::span<const double> costs, std::span<const task_id_t> order, int workers,
                   int min_tasks, double most_cost, std::vector<task_id_t>& bounds) {
  double left = 0.0;
  for (task_id_t t : order) left += costs[static_cast<std::size_t>(t)];
  const double share = 1.0 / (2.0 * std::max(1, workers));
  const std::size_t n = order.size(), fewest = static_cast<std::size_t>(std::max(1, min_tasks));
  bounds.assign(1, 0);
  for (std::size_t i = 0; i < n;) {
    const double most = std::min(most_cost, left * share);
    double chunk = 0.0;
    std::size_t end = i;
    while (end < n) {
      const double next = chunk + costs[static_cast<std::size_t>(order[end])];
      if (end - i >= fewest && next > most) break;
      chunk = next;
      ++end;
    }
    left -= chunk;
    bounds.push_back(static_cast<task_id_t>(end));
    i = end;
  }
}

int default_group_size(int workers) {
  // One domain (or no information) means core pairs.
  const NumaDomains& numa = NumaDomains::system();
  if (numa.count() > 1) return numa.group_size(workers);
  return std::min(2, std::max(1, workers));
}

}  // namespace tilecc
