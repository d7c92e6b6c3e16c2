#include "tilecc/trace.hpp"

#include <algorithm>

namespace tilecc {

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::schedule:
      return "schedule";
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

void WorkerTimeline::begin(double start, bool record_events, int segments) {
  seconds_.fill(0.0);
  segment_seconds_.assign(static_cast<std::size_t>(segments), PhaseSeconds{});
  events_.clear();
  recording_ = record_events;
  since_ = start;
  phase_ = Phase::wait;
  task_ = -1;
  segment_ = -1;
}

void WorkerTimeline::switch_to(Phase phase, task_id_t task, double now) {
  const double elapsed = now - since_;
  seconds_[static_cast<std::size_t>(phase_)] += elapsed;
  if (segment_ >= 0)
    segment_seconds_[static_cast<std::size_t>(segment_)][static_cast<std::size_t>(phase_)] +=
        elapsed;
  if (recording_ && now > since_) events_.push_back({since_, now, task_, segment_, phase_});
  since_ = now;
  phase_ = phase;
  task_ = task;
  if (task < 0) segment_ = -1;
}

void WorkerTimeline::finish(double end) { switch_to(Phase::wait, -1, std::max(end, since_)); }

}  // namespace tilecc
