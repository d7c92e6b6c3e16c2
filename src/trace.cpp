#include "tilecc/trace.hpp"

#include <algorithm>

namespace tilecc {

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::fetch:
      return "fetch";
    case Phase::permute:
      return "permute";
    case Phase::gemm:
      return "gemm";
    case Phase::accumulate:
      return "accumulate";
    case Phase::wait:
      return "wait";
  }
  return "?";
}

void WorkerTimeline::begin(double start, bool record_events) {
  seconds_.fill(0.0);
  events_.clear();
  recording_ = record_events;
  since_ = start;
  phase_ = Phase::wait;
  task_ = -1;
}

void WorkerTimeline::switch_to(Phase phase, task_id_t task, double now) {
  seconds_[static_cast<std::size_t>(phase_)] += now - since_;
  if (recording_ && now > since_) events_.push_back({since_, now, task_, phase_});
  since_ = now;
  phase_ = phase;
  task_ = task;
}

void WorkerTimeline::finish(double end) { switch_to(Phase::wait, -1, std::max(end, since_)); }

}  // namespace tilecc
