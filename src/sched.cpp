#include "tilecc/sched.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

#include "policies/policies.hpp"
#include "tilecc/error.hpp"

namespace tilecc {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, PolicyFactory> factories;
};

Registry& registry() {
  // Never destroyed: policies may be made during static destruction of other objects.
  static Registry* r = [] {
    auto* reg = new Registry;
    reg->factories["tce"] = policies::make_tce;
    reg->factories["counter"] = policies::make_counter;
    reg->factories["static-block"] = policies::make_static_block;
    reg->factories["static-lpt"] = policies::make_static_lpt;
    reg->factories["buckets"] = policies::make_buckets;
    reg->factories["steal"] = policies::make_steal;
    return reg;
  }();
  return *r;
}

}  // namespace

void register_policy(const std::string& name, PolicyFactory factory) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  TILECC_CHECK(!r.factories.contains(name), "a scheduling policy called '", name,
               "' is already registered; choose another name.");
  r.factories.emplace(name, std::move(factory));
}

std::vector<std::string> policy_names() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, f] : r.factories) names.push_back(name);
  return names;
}

std::unique_ptr<SchedulePolicy> make_policy(const std::string& name, const PolicyOptions& options) {
  PolicyFactory factory;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.factories.find(name);
    if (it != r.factories.end()) factory = it->second;
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

void sort_by_decreasing_cost(std::span<const double> costs, std::vector<task_id_t>& order) {
  order.resize(costs.size());
  std::iota(order.begin(), order.end(), task_id_t{0});
  // The index breaks ties, so that the order is that of a stable sort without its buffer.
  std::sort(order.begin(), order.end(), [&](task_id_t x, task_id_t y) {
    const double cx = costs[static_cast<std::size_t>(x)], cy = costs[static_cast<std::size_t>(y)];
    return cx > cy || (cx == cy && x < y);
  });
}

void LptPartition::assign(std::span<const double> costs, std::span<const int> capacities) {
  bins_used_ = capacities.size();
  if (bins_.size() < bins_used_) bins_.resize(bins_used_);
  if (bins_used_ == 1) {  // one bin takes every task, in the order
    sort_by_decreasing_cost(costs, bins_[0]);
    return;
  }
  load_.assign(bins_used_, 0.0);
  heap_.clear();
  for (std::size_t b = 0; b < bins_used_; ++b) {
    bins_[b].clear();
    heap_.emplace_back(0.0, b);  // all loads equal: already a heap
  }
  sort_by_decreasing_cost(costs, order_);
  // A min-heap: the least loaded bin, the lowest-numbered among equals, at the front.
  const std::greater<> later;
  for (task_id_t t : order_) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const std::size_t b = heap_.back().second;
    bins_[b].push_back(t);
    load_[b] += costs[static_cast<std::size_t>(t)];
    heap_.back().first = load_[b] / capacities[b];
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
}

int default_group_size(int workers) {
  // NUMA domains as Linux lists them, read once: `buckets` asks at the start of every run, and
  // listing the directory costs more than scheduling a small contraction.
  static const int domains = [] {
    int found = 0;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/sys/devices/system/node", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("node") && name.size() > 4 &&
          std::all_of(name.begin() + 4, name.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
        ++found;
    }
    return found;
  }();
  // One domain (or no information) means core pairs.
  if (domains > 1) return std::max(1, (workers + domains - 1) / domains);
  return std::min(2, std::max(1, workers));
}

}  // namespace tilecc
