#include "tilecc/inspect.hpp"

#include <exception>
#include <optional>

#include "tilecc/trace.hpp"

namespace tilecc {

BuiltPlans build_plans(std::vector<PlanRequest> requests, PlanLayout layout, const CostModel& model,
                       int workers, Executor& executor) {
  const std::size_t n = requests.size();
  std::vector<std::optional<ContractionPlan>> built(n);
  std::vector<std::exception_ptr> errors(n);
  BuiltPlans out;
  out.workers.resize(n);
  out.start = clock_seconds();
  // Each request's error is kept rather than thrown, so that the one reported does not depend on
  // which worker got to its request first.
  executor.for_each(static_cast<std::int64_t>(n), [&](std::int64_t item, int worker) {
    const auto i = static_cast<std::size_t>(item);
    out.workers[i] = worker;
    PlanRequest& r = requests[i];
    try {
      built[i].emplace(std::move(r.c), std::move(r.a), std::move(r.b), layout, model, workers);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  });
  out.seconds = clock_seconds() - out.start;
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  out.plans.reserve(n);
  for (std::optional<ContractionPlan>& plan : built) out.plans.push_back(std::move(*plan));
  return out;
}

}  // namespace tilecc
