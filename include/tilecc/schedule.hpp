#pragma once
/** @file A plan's per-run state, kept beside the sealed plan: what changes from one execution of
 * it to the next. */
#include <span>
#include <string>
#include <vector>

#include "tilecc/correction.hpp"
#include "tilecc/plan.hpp"
#include "tilecc/staging.hpp"

namespace tilecc {

/** Predicted vs measured time per task: relative errors |predicted - measured| / measured. */
struct ModelError {
  double median = 0.0, p90 = 0.0;
  std::int64_t tasks = 0;  ///< tasks compared (0: no run measured yet)
};

/**
 * The run-to-run state of one plan: the correction applied to its predicted task costs, the
 * measured task times of its last run (the costs a refining policy schedules with next, paper
 * 001's iterative refinement), and the policy that schedules it. A plan is immutable once the
 * inspector has built it, so contexts (and, later, ranks) can share one, each with its own
 * schedule; the schedule must not outlive its plan.
 *
 * @code
 *   const ContractionPlan plan(c, a, b, PlanLayout::inspector, model, workers);
 *   Schedule schedule(plan);
 *   schedule.correct(corrector.correction());
 *   contract(schedule, 1.0, ta, tb, tc, executor);     // records the measured times
 *   corrector.observe(plan.modelled_seconds(), schedule.measured_seconds());
 * @endcode
 */
class Schedule {
 public:
  explicit Schedule(const ContractionPlan& plan) : plan_(&plan) {}

  const ContractionPlan& plan() const { return *plan_; }

  /** Seconds predicted for each task, in the order of the plan's tasks: the model's, corrected.
   *  While the correction is the identity these are the plan's own predictions, not a copy. */
  const std::vector<double>& estimated_seconds() const {
    return estimated_.empty() ? plan_->modelled_seconds() : estimated_;
  }
  /** Correct the model's predictions by what measured runs showed it misses. */
  void correct(const ModelCorrection& correction);
  const ModelCorrection& correction() const { return correction_; }

  /** Measured seconds of each task in the last execution (empty before the first). */
  const std::vector<double>& measured_seconds() const { return measured_; }
  /** Keep one execution's task times. */
  void record_measured(std::span<const double> seconds);
  /** The costs a policy should schedule with: the last measured times when refining and there are
   *  some, else the corrected prediction. */
  std::span<const double> costs(bool refine) const;
  /** How far the corrected prediction was from the last measured task times. */
  ModelError model_error() const;

  /** The policy that schedules the plan, for the summary (the plan does not depend on it beyond
   *  its layout). */
  void set_policy_name(std::string name) { policy_ = std::move(name); }
  const std::string& policy_name() const { return policy_; }
  /** The stages its runs go through (checked against the plan); empty: none. */
  void set_staging(Staging staging);
  const Staging& staging() const { return staging_; }
  /** The rank each task runs on across ranks (a placement, tilecc.placement), in the order of
   *  the plan's tasks; empty: the policy decides (its counter or each rank's LPT share). */
  void set_placement(std::vector<int> rank_of_task);
  const std::vector<int>& placement() const { return placement_; }

  /** The plan's summary, with the policy and the model's error on the last run. */
  std::string summary() const;

 private:
  const ContractionPlan* plan_;
  ModelCorrection correction_;
  std::vector<double> estimated_, measured_;
  std::string policy_;
  Staging staging_;
  std::vector<int> placement_;
};

}  // namespace tilecc
