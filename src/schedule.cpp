#include "tilecc/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "tilecc/error.hpp"

namespace tilecc {

void Schedule::correct(const ModelCorrection& correction) {
  correction_ = correction;
  // A context corrects every schedule again before each run: while the correction is the
  // identity, the plan's predictions serve without a copy.
  if (correction.scale == 1.0 && correction.overhead == 0.0) {
    estimated_.clear();
    return;
  }
  const std::vector<double>& modelled = plan_->modelled_seconds();
  estimated_.resize(modelled.size());
  for (std::size_t t = 0; t < modelled.size(); ++t)
    estimated_[t] = correction.scale * modelled[t] + correction.overhead;
}

void Schedule::set_staging(Staging staging) {
  check_staging(staging, *plan_);
  staging_ = std::move(staging);
}

void Schedule::set_placement(std::vector<int> rank_of_task) {
  TILECC_CHECK(rank_of_task.empty() || rank_of_task.size() == plan_->tasks().size(),
               "a placement of ", rank_of_task.size(), " tasks given to a plan of ",
               plan_->tasks().size(), " tasks.");
  for (const int rank : rank_of_task)
    TILECC_CHECK(rank >= 0, "a placement puts a task on rank ", rank, ", which does not exist.");
  placement_ = std::move(rank_of_task);
}

void Schedule::record_measured(std::span<const double> seconds) {
  TILECC_CHECK(seconds.size() == plan_->tasks().size(), "measured times for ", seconds.size(),
               " tasks given to a plan of ", plan_->tasks().size(), " tasks.");
  measured_.assign(seconds.begin(), seconds.end());
}

std::span<const double> Schedule::costs(bool refine) const {
  return refine && !measured_.empty() ? std::span<const double>(measured_)
                                      : std::span<const double>(estimated_seconds());
}

ModelError Schedule::model_error() const {
  std::vector<double> errors;
  const std::vector<double>& estimated = estimated_seconds();
  for (std::size_t t = 0; t < measured_.size(); ++t)
    if (measured_[t] > 0.0) errors.push_back(std::abs(estimated[t] - measured_[t]) / measured_[t]);
  ModelError e;
  e.tasks = static_cast<std::int64_t>(errors.size());
  if (errors.empty()) return e;
  std::sort(errors.begin(), errors.end());
  auto quantile = [&](double q) {
    return errors[std::min(errors.size() - 1,
                           static_cast<std::size_t>(q * static_cast<double>(errors.size())))];
  };
  e.median = quantile(0.5);
  e.p90 = quantile(0.9);
  return e;
}

std::string Schedule::summary() const {
  std::string text = plan_->summary();
  if (!policy_.empty()) text += ", policy " + policy_;
  if (const ModelError e = model_error(); e.tasks > 0) {
    char buf[96];
    std::snprintf(buf, sizeof buf, ", model error per task median %.0f%% p90 %.0f%%",
                  100.0 * e.median, 100.0 * e.p90);
    text += buf;
  }
  return text;
}

}  // namespace tilecc
