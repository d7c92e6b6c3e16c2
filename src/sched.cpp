#include "tilecc/sched.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "tilecc/error.hpp"

namespace tilecc {

CounterPolicy::CounterPolicy(const PolicyOptions& options) : quantum_(options.quantum) {
  TILECC_CHECK(options.quantum >= 1,
               "the scheduling quantum is the number of tasks taken per"
               " counter fetch and must be at least 1, got ",
               options.quantum, ".");
}

void CounterPolicy::start(std::span<const double> costs, int /*workers*/) {
  num_tasks_ = static_cast<task_id_t>(costs.size());
  next_.store(0);
  calls_.store(0);
}

TaskRange CounterPolicy::next(int /*worker*/) {
  calls_.fetch_add(1, std::memory_order_relaxed);
  const task_id_t begin = next_.fetch_add(quantum_, std::memory_order_relaxed);
  return {begin, std::min(begin + quantum_, num_tasks_)};
}

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, PolicyFactory> factories;
};

Registry& registry() {
  // Never destroyed: policies may be made during static destruction of other objects.
  static Registry* r = [] {
    auto* reg = new Registry;
    reg->factories["counter"] = [](const PolicyOptions& o) {
      return std::make_unique<CounterPolicy>(o);
    };
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
  return factory(options);
}

}  // namespace tilecc
