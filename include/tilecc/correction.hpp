#pragma once
/** @file ModelCorrector: what the calibrated cost model misses, learned from measured task times.
 */
#include <span>

namespace tilecc {

/** A task takes about scale * (the model's prediction) + overhead seconds. */
struct ModelCorrection {
  double scale = 1.0;
  double overhead = 0.0;  ///< seconds per task
};

/**
 * Learns a ModelCorrection from every run it is shown.
 *
 * The cost model is calibrated once per machine on isolated GEMMs and permutations. A running job
 * adds what those kernels never see (the executor's bookkeeping and the operand lookups of every
 * task: a fixed cost per task) and runs on a machine whose speed drifts from the one calibrated
 * (shared cores, frequency changes). The corrector fits measured = scale * predicted + overhead
 * by least squares on relative errors (each task weighted by 1 / measured^2, so small tasks
 * count as much as large ones), with older runs fading out, and the context applies the result to
 * the predictions of every plan before it runs: a prediction never uses the times it is judged
 * against.
 *
 * @code
 *   ModelCorrector corrector;
 *   corrector.observe(plan.modelled_seconds(), plan.measured_seconds());
 *   next_plan.correct(corrector.correction());
 * @endcode
 */
class ModelCorrector {
 public:
  /** Learn from one run: the model's predictions and the measured times of its tasks. */
  void observe(std::span<const double> predicted, std::span<const double> measured);
  const ModelCorrection& correction() const { return correction_; }
  /** Tasks observed, before fading (0: the correction is still the identity). */
  long long tasks() const { return tasks_; }

  /** Observations fade by e^-1 every this many tasks. */
  static constexpr double memory_tasks = 1024.0;

 private:
  // Weighted normal equations of measured ~ scale * predicted + overhead.
  double sxx_ = 0.0, sx_ = 0.0, s1_ = 0.0, sxy_ = 0.0, sy_ = 0.0;
  long long tasks_ = 0;
  ModelCorrection correction_;
};

}  // namespace tilecc
