#pragma once
/** @file The inspector over a batch: the plans of several contractions, built on the executor's
 * workers at once. A CC update needs tens of plans, each independent of the others, so every
 * worker can build some of them. */
#include <vector>

#include "tilecc/exec.hpp"
#include "tilecc/plan.hpp"

namespace tilecc {

/** The operands of one contraction to plan, C += A * B. */
struct PlanRequest {
  Operand c, a, b;
};

/** Plans built together, in the order they were asked for. */
struct BuiltPlans {
  std::vector<ContractionPlan> plans;
  /** The worker that built each plan (ContractionPlan::inspector_started() and
   *  inspector_seconds() say when and for how long). */
  std::vector<int> workers;
  double start = 0.0, seconds = 0.0;  ///< the wall time of the whole batch
};

/** Build a plan (ContractionPlan's constructor, with this layout, model and worker count) for each
 *  request, on `executor`'s workers. A request the constructor refuses makes this throw that
 *  error: the first such request's, in the order given, whichever worker met it first. */
BuiltPlans build_plans(std::vector<PlanRequest> requests, PlanLayout layout, const CostModel& model,
                       int workers, Executor& executor);

}  // namespace tilecc
