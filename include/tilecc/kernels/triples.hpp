#pragma once
/** @file The (T) kernel contract: the (T) energy as a sum over tasks, grouped into steps, over
 * non-zero symmetry blocks only.
 *
 * Kernel contract:
 *  - The (T) energy is scale() times the sum of energy(step, task) over every task of every step.
 *    A task stands for several triples (occupied or virtual, as the kernel loops) and returns their
 *    summands already weighted by the orderings each stands for.
 *  - Steps are what the scheduler runs at once (one executor run each) and what progress counts;
 *    a kernel makes them of similar work and of enough tasks to keep every worker busy.
 *  - cost(step, task) is the task's work up to a constant (the scheduler's cost); flops(step,
 *    task) the floating-point operations its GEMMs execute (they dominate its work).
 *  - Inputs are read once, through the tensors' stores, when the kernel is made, and repacked,
 *    once per node: on several ranks the node's first rank reads them and writes the repacked
 *    arrays into memory the node's ranks share (NodeShared). The occupied-loop kernels spread
 *    their 4-index inputs over the nodes instead, a slice per occupied orbital (NodeSlices):
 *    a task gets the slices of its triple that its node does not hold;
 *    energy() is const and writes only its scratch (scratch_doubles() of it), so workers may call
 *    it concurrently. A kernel made from the spaces alone describes the work (steps, tasks,
 *    costs, flops, predicted seconds) and refuses energy().
 */
#include <array>
#include <cstdint>
#include <vector>

#include "tilecc/cost.hpp"
#include "tilecc/error.hpp"
#include "tilecc/node_shared.hpp"
#include "tilecc/node_slices.hpp"
#include "tilecc/types.hpp"

namespace tilecc::kernels {

/** Kernels that loop over occupied triples make step i of the pairs (j, k) after it: i <= j <= k,
 *  or i < j < k where the summand vanishes when two coincide (`distinct`). Their number: */
inline extent_t occupied_pairs(extent_t occupied, extent_t i, bool distinct) {
  const extent_t after = occupied - i - (distinct ? 1 : 0);
  return after < 1 ? 0 : distinct ? after * (after - 1) / 2 : after * (after + 1) / 2;
}

/** Step i's task-th pair (j, k), in order of j, then k. */
inline std::array<extent_t, 2> occupied_pair(extent_t occupied, extent_t i, extent_t task,
                                             bool distinct) {
  const extent_t step = distinct ? 1 : 0;
  for (extent_t j = i + step; j < occupied; ++j) {
    const extent_t ks = occupied - j - step;
    if (task < ks) return {j, j + step + task};
    task -= ks;
  }
  TILECC_CHECK(false, "(T): step ", i, " has no task ", task, ".");
  return {};
}

/** Bytes a kernel holds in this process: its own arrays, what it holds of those its node shares,
 *  and of those spread over the nodes. */
inline std::int64_t held_bytes(std::initializer_list<const std::vector<double>*> own,
                               std::initializer_list<const NodeShared*> shared,
                               std::initializer_list<const NodeSlices*> spread = {}) {
  std::int64_t bytes = 0;
  for (const std::vector<double>* a : own) bytes += static_cast<std::int64_t>(a->size() * 8);
  for (const NodeShared* a : shared) bytes += a->held_bytes();
  for (const NodeSlices* a : spread) bytes += a->held_bytes();
  return bytes;
}

/** Bytes of the small vectors every process of a kernel over o occupied and v virtual orbitals
 *  holds: t1, f_ov and the orbital energies. */
inline std::int64_t vector_bytes(extent_t o, extent_t v) { return 8 * (2 * o * v + o + v); }

/** For a kernel whose arrays are spread a slice per occupied orbital p: the doubles of p's slices
 *  of all of them, two sized per p (`x`, `tm`) and the others `dense` doubles each. */
inline std::vector<std::size_t> slice_doubles(const std::vector<std::size_t>& x,
                                              const std::vector<std::size_t>& tm,
                                              std::size_t dense) {
  std::vector<std::size_t> doubles(x.size());
  for (std::size_t p = 0; p < doubles.size(); ++p) doubles[p] = x[p] + tm[p] + dense;
  return doubles;
}

/** Bytes one node holds of such a kernel's inputs in all: every slice, and the small vectors. */
inline std::int64_t spread_input_bytes(const std::vector<std::size_t>& slice_doubles, extent_t o,
                                       extent_t v) {
  std::int64_t doubles = 0;
  for (const std::size_t n : slice_doubles) doubles += static_cast<std::int64_t>(n);
  return 8 * doubles + vector_bytes(o, v);
}

/** Bytes got from other nodes' slices of these arrays. */
inline std::int64_t fetched_bytes(std::initializer_list<const NodeSlices*> arrays) {
  std::int64_t bytes = 0;
  for (const NodeSlices* a : arrays) bytes += a->fetched_bytes();
  return bytes;
}

/** The distinct orderings of a triple: 1, 3 or 6 as it has three, two or one distinct values. */
inline double distinct_orderings(extent_t x, extent_t y, extent_t z) {
  return (x == y && y == z) ? 1.0 : (x == y || y == z || x == z) ? 3.0 : 6.0;
}

class TriplesKernel {
 public:
  virtual ~TriplesKernel() = default;
  virtual extent_t steps() const = 0;
  virtual extent_t tasks(extent_t step) const = 0;
  /** The (T) energy over the sum of energy() over all tasks. */
  virtual double scale() const = 0;
  virtual extent_t scratch_doubles() const = 0;
  virtual double cost(extent_t step, extent_t task) const = 0;
  virtual double flops(extent_t step, extent_t task) const = 0;
  /** `worker`: the calling worker's index (what a kernel keeps per worker: the slices of spread
   *  inputs it got). */
  virtual double energy(extent_t step, extent_t task, double* scratch, int worker) const = 0;
  /** Bytes of repacked inputs this process holds (arrays a node shares count on its first rank
   *  alone). */
  virtual std::int64_t held_bytes() const = 0;
  /** Bytes of repacked inputs one node holds in all (one process's held_bytes()), known from
   *  the spaces alone: what `tilecc plan` counts for the (T) step. */
  virtual std::int64_t input_bytes() const = 0;
  /** Bytes this process has got from other nodes' slices of the inputs (NodeSlices) so far. */
  virtual std::int64_t fetched_bytes() const { return 0; }
  /** Per occupied orbital p, the doubles of its slices of the inputs the kernel spreads over the
   *  nodes (all arrays' slice p, which share a node); empty when it spreads none. */
  virtual std::vector<std::size_t> slice_doubles() const { return {}; }
  /** The occupied orbitals whose slices the task reads (distinct). */
  virtual std::vector<extent_t> task_orbitals(extent_t /*step*/, extent_t /*task*/) const {
    return {};
  }
  /** The task's seconds on one worker, predicted by the calibrated cost model: its GEMMs by the
   *  GEMM model at their shapes, its passes over its arrays by the permutation model as the
   *  copies and transposes they resemble. What `tilecc simulate` runs the (T) step with. */
  virtual double predicted_seconds(extent_t step, extent_t task, const CostModel& model) const = 0;
};

}  // namespace tilecc::kernels
