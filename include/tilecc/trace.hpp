#pragma once
/** @file Where each worker's time goes: per-phase accounting during a run, and (when tracing)
 * one event per phase slice for a Chrome/Perfetto trace.
 *
 * A worker's time in a run is charged to exactly one phase at a time, from the run's start to its
 * end, so the phases of all workers add up to workers x wall time (paper 000's Fig. 12):
 * `gemm` is compute, `permute` and `accumulate` move data, `fetch` is asking the policy for work
 * (counter, queues), `wait` is idle (late start and load imbalance at the end).
 *
 * A run may hold the tasks of several contractions (see contract_batch). The work inside a task is
 * then also counted per segment, the contraction it is for: a task body names its segment with
 * label(). Fetching and waiting belong to the run as a whole (segment -1).
 */
#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include "tilecc/types.hpp"

namespace tilecc {

/** What a worker's time goes to: asking the policy for work (schedule), reading operand blocks
 *  through their store (fetch; only stores without zero-copy views are timed), permuting them,
 *  GEMMs, writing results back (accumulate), and waiting for work or for a task it depends on. */
enum class Phase : std::uint8_t { schedule, fetch, permute, gemm, accumulate, wait };
inline constexpr int num_phases = 6;
/** "schedule", "fetch", "permute", "gemm", "accumulate", "wait". */
const char* phase_name(Phase phase);

using PhaseSeconds = std::array<double, num_phases>;

/** Seconds on the steady clock (the clock every trace timestamp uses). */
inline double clock_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/** One slice of a worker's time: a phase, for a task (-1 outside tasks) of a segment (-1 when
 *  none was named), on the steady clock. */
struct TraceEvent {
  double start = 0.0, end = 0.0;
  task_id_t task = -1;
  std::int32_t segment = -1;
  Phase phase = Phase::wait;
};

/**
 * One worker's clock during a run. enter() closes the current phase and opens another; entering
 * the phase already open costs nothing, so a task reads the clock only when its work changes kind.
 * Only the worker that owns a timeline touches it while the run is in progress; timelines are
 * cache-line aligned so that workers switching phases never write to one another's lines.
 */
class alignas(64) WorkerTimeline {
 public:
  /** Start a run of `segments` segments at time `start` in phase wait (a worker is idle until it
   *  asks for work). */
  void begin(double start, bool record_events, int segments = 1);
  void enter(Phase phase, task_id_t task = -1) {
    if (phase == phase_ && task == task_) return;
    switch_to(phase, task, clock_seconds());
  }
  /** enter() at a time the caller has just read (saves a clock read on the executor's path). */
  void enter_at(Phase phase, task_id_t task, double now) {
    if (phase == phase_ && task == task_) return;
    switch_to(phase, task, now);
  }
  /** Name the contraction (segment) and its task that the slice just opened works for: a task
   *  body saying whose task it runs. Leaving a task (entering a phase for task -1) ends its
   *  segment. */
  void label(std::int32_t segment, task_id_t task) {
    segment_ = segment;
    task_ = task;
  }
  /** The task whose phase is open (-1 outside tasks). */
  task_id_t task() const { return task_; }
  /** Close the run at `end`, charging the time since the last switch to wait. */
  void finish(double end);
  const PhaseSeconds& seconds() const { return seconds_; }
  /** The part of seconds() spent in each segment. */
  const std::vector<PhaseSeconds>& segment_seconds() const { return segment_seconds_; }
  const std::vector<TraceEvent>& events() const { return events_; }

 private:
  void switch_to(Phase phase, task_id_t task, double now);

  PhaseSeconds seconds_{};
  std::vector<PhaseSeconds> segment_seconds_;
  std::vector<TraceEvent> events_;
  bool recording_ = false;
  double since_ = 0.0;
  Phase phase_ = Phase::wait;
  task_id_t task_ = -1;
  std::int32_t segment_ = -1;
};

}  // namespace tilecc
