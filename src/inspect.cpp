#include "tilecc/inspect.hpp"

#include <array>
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
  // Each request's shapes, taken before the requests are moved into their plans: while a worker
  // builds one plan it starts loading the tables the next one reads (the plans of a CC update
  // are built right after contractions that have evicted them), so that they arrive while it
  // works rather than one miss at a time when the next plan reaches them. The first plan's are
  // loaded as the batch starts.
  std::vector<std::array<const BlockShape*, 3>> shapes(n);
  for (std::size_t i = 0; i < n; ++i)
    shapes[i] = {requests[i].c.shape.get(), requests[i].a.shape.get(), requests[i].b.shape.get()};
  auto load = [&](std::size_t i) {
    for (const BlockShape* shape : shapes[i])
      if (shape != nullptr) shape->prefetch_inspected();
  };
  out.start = clock_seconds();
  if (n > 0) load(0);
  // Each request's error is kept rather than thrown, so that the one reported does not depend on
  // which worker got to its request first.
  executor.for_each(static_cast<std::int64_t>(n), [&](std::int64_t item, int worker) {
    const auto i = static_cast<std::size_t>(item);
    out.workers[i] = worker;
    if (i + 1 < n) load(i + 1);
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
