#pragma once
/** @file Performance models of the two kernels a task runs, GEMM and block permutation, and the
 * micro-benchmarks that calibrate them (paper 001's DGEMM and SORT4 models).
 *
 * The coefficients are data, measured on the machine: tilecc.wisdom fits them to the timings
 * these micro-benchmarks return and keeps them in the wisdom file. An uncalibrated CostModel
 * holds round numbers that only rank tasks by size.
 */
#include <array>
#include <utility>
#include <vector>

#include "tilecc/types.hpp"

namespace tilecc {

/** How a permutation walks memory: a plain copy, one that copies contiguous runs (the innermost
 *  axis kept), or one that changes the innermost axis (a strided transpose). */
enum class PermuteKind : std::uint8_t { copy, runs, transpose };

/** What a permutation's cost depends on: the kernel's loops (kernels::permute_loops). */
struct PermuteShape {
  PermuteKind kind = PermuteKind::copy;
  extent_t elements = 0;
  extent_t inner_loops = 1;  ///< innermost loops the kernel enters, each with its own overhead
};
PermuteShape permute_shape(int rank, const extent_t* extents, const Axes& axes);

/**
 * Seconds of a kernel as a sum of the work it does, each kind of work at a rate measured on the
 * machine: a fixed cost per call, then per flop, per element packed or written, per loop entered.
 * The terms follow how the kernels spend time (a GEMM packs A[m, k] and B[k, n], runs m n k
 * multiply-adds and updates C[m, n]), so one model holds from overhead-bound blocks of a few
 * elements to the largest, and beyond the calibrated sizes (a quadratic in log sizes, the model
 * before this one, bent down there). The calibration reports its error on kernels it did not fit.
 */
struct CostModel {
  /// GEMM seconds on [1, m n k, m k, k n, m n, m, n, k].
  std::array<double, 8> gemm{1e-7, 2.3e-10, 0, 0, 0, 0, 0, 0};  // 8.6 GFLOP/s uncalibrated
  /// Permutation seconds on [1, elements of a copy, of runs, of a transpose, inner loops].
  std::array<double, 5> permute{1e-7, 1e-9, 2e-9, 4e-9, 0};  // 1, 0.5, 0.25 G elements/s

  double gemm_seconds(extent_t m, extent_t n, extent_t k) const;
  double permute_seconds(const PermuteShape& p) const;
  double permute_seconds(int rank, const extent_t* extents, const Axes& axes) const {
    return permute_seconds(permute_shape(rank, extents, axes));
  }
  bool operator==(const CostModel&) const = default;
};

/**
 * A CostModel's predictions, remembered by shape: the inspector asks about the same few block
 * shapes thousands of times per plan, and pricing a permutation means working out the kernel's
 * loops.
 * Direct-mapped, so a shape that collides with another is evaluated again, never mispriced.
 */
class CostCache {
 public:
  explicit CostCache(const CostModel& model) : model_(model), entries_(size) {}
  /** This thread's cache for `model`. It outlives a plan because the plans of one CC iteration
   *  price the same few block shapes (and filling a fresh cache per plan cost a quarter of
   *  pricing its tasks); it is emptied when asked for another model. */
  static CostCache& of(const CostModel& model);
  double gemm_seconds(extent_t m, extent_t n, extent_t k);
  double permute_seconds(const PermuteShape& p);
  /** Keyed by the block's extents and axes themselves when they pack into a key (rank <= 4,
   *  extents < 2048: every block of a CC tensor with sensible tiles), which skips working out
   *  the kernel's loops for the blocks of the few sizes a tensor's tiles make. */
  double permute_seconds(int rank, const extent_t* extents, const Axes& axes);

 private:
  static constexpr std::size_t size = 1024;
  struct Entry {
    std::uint64_t key = ~std::uint64_t{0};  // no shape packs to all ones
    double seconds = 0.0;
  };
  template <class Evaluate>
  double lookup(std::uint64_t key, Evaluate&& evaluate);
  CostModel model_;
  std::vector<Entry> entries_;
};

/** Median seconds of C[m, n] += A[m, k] B[k, n] for each shape, on one thread. */
std::vector<double> time_gemms(const std::vector<std::array<extent_t, 3>>& shapes, int repeats);
/** Median seconds of permuting a block with these extents by these axes, for each case. */
std::vector<double> time_permutes(const std::vector<std::pair<std::vector<extent_t>, Axes>>& cases,
                                  int repeats);

}  // namespace tilecc
