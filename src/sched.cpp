#include "tilecc/sched.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <numeric>
#include <queue>
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

std::vector<task_id_t> by_decreasing_cost(std::span<const double> costs) {
  std::vector<task_id_t> order(costs.size());
  std::iota(order.begin(), order.end(), task_id_t{0});
  std::stable_sort(order.begin(), order.end(), [&](task_id_t x, task_id_t y) {
    return costs[static_cast<std::size_t>(x)] > costs[static_cast<std::size_t>(y)];
  });
  return order;
}

std::vector<std::vector<task_id_t>> lpt_partition(std::span<const double> costs,
                                                  std::span<const int> capacities) {
  std::vector<std::vector<task_id_t>> bins(capacities.size());
  // Min-heap of (load per unit of capacity, bin).
  using Entry = std::pair<double, std::size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  std::vector<double> load(capacities.size(), 0.0);
  for (std::size_t b = 0; b < capacities.size(); ++b) heap.emplace(0.0, b);
  for (task_id_t t : by_decreasing_cost(costs)) {
    const std::size_t b = heap.top().second;
    heap.pop();
    bins[b].push_back(t);
    load[b] += costs[static_cast<std::size_t>(t)];
    heap.emplace(load[b] / capacities[b], b);
  }
  return bins;
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
