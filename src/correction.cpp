#include "tilecc/correction.hpp"

#include <algorithm>
#include <cmath>

#include "tilecc/error.hpp"

namespace tilecc {

void ModelCorrector::observe(std::span<const double> predicted, std::span<const double> measured) {
  TILECC_CHECK(predicted.size() == measured.size(), "observe: ", predicted.size(),
               " predicted but ", measured.size(), " measured task times.");
  std::size_t used = 0;
  for (std::size_t t = 0; t < measured.size(); ++t) used += measured[t] > 0.0 ? 1 : 0;
  if (used == 0) return;
  const double fade = std::exp(-static_cast<double>(used) / memory_tasks);
  for (double* s : {&sxx_, &sx_, &s1_, &sxy_, &sy_}) *s *= fade;
  for (std::size_t t = 0; t < measured.size(); ++t) {
    const double x = predicted[t], y = measured[t];
    if (y <= 0.0) continue;
    const double w = 1.0 / (y * y);
    sxx_ += w * x * x;
    sx_ += w * x;
    s1_ += w;
    sxy_ += w * x * y;
    sy_ += w * y;
  }
  tasks_ += static_cast<long long>(used);
  // Solve the 2x2 system; without a usable overhead (singular, or negative), fit the scale alone.
  const double det = sxx_ * s1_ - sx_ * sx_;
  ModelCorrection c;
  if (det > 1e-12 * sxx_ * s1_) {
    c.scale = (sxy_ * s1_ - sx_ * sy_) / det;
    c.overhead = (sxx_ * sy_ - sx_ * sxy_) / det;
  }
  if (!(c.overhead >= 0.0 && c.scale > 0.0)) {
    c.overhead = 0.0;
    c.scale = sxx_ > 0.0 ? sxy_ / sxx_ : 1.0;
  }
  // A factor beyond 100 either way means measurements unrelated to the model (a stopped
  // process, a debugger): keep the correction within reason.
  c.scale = std::clamp(c.scale, 0.01, 100.0);
  correction_ = c;
}

}  // namespace tilecc
