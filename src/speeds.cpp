#include "tilecc/speeds.hpp"

#include "tilecc/error.hpp"

namespace tilecc {

WorkerSpeeds::WorkerSpeeds(int workers)
    : speeds_(static_cast<std::size_t>(workers), 1.0),
      scheduled_(static_cast<std::size_t>(workers), 0.0),
      measured_(static_cast<std::size_t>(workers), 0.0) {}

void WorkerSpeeds::observe(std::span<const double> costs, std::span<const double> seconds,
                           std::span<const int> workers) {
  TILECC_CHECK(costs.size() == seconds.size() && costs.size() == workers.size(), "a run of ",
               costs.size(), " tasks came with ", seconds.size(), " times and ", workers.size(),
               " workers; give one of each per task.");
  for (std::size_t w = 0; w < speeds_.size(); ++w) {
    scheduled_[w] *= keep;
    measured_[w] *= keep;
  }
  for (std::size_t t = 0; t < costs.size(); ++t)
    if (const int w = workers[t]; w >= 0) {
      TILECC_CHECK(static_cast<std::size_t>(w) < speeds_.size(), "task ", t, " ran on worker ", w,
                   " of a pool of ", speeds_.size(), ".");
      scheduled_[static_cast<std::size_t>(w)] += costs[t];
      measured_[static_cast<std::size_t>(w)] += seconds[t];
    }
  auto known = [&](std::size_t w) { return scheduled_[w] > 0.0 && measured_[w] > 0.0; };
  double sum = 0.0;
  int count = 0;
  for (std::size_t w = 0; w < speeds_.size(); ++w)
    if (known(w)) {
      sum += scheduled_[w] / measured_[w];
      ++count;
    }
  if (count < 2) return;  // one worker's rate says nothing about relative speeds
  const double mean = sum / count;
  for (std::size_t w = 0; w < speeds_.size(); ++w)
    speeds_[w] = known(w) ? scheduled_[w] / measured_[w] / mean : 1.0;
}

}  // namespace tilecc
