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

/** How a permutation walks memory: a plain copy, one that keeps the innermost axis (contiguous
 *  runs), or one that changes it (a strided transpose). */
enum class PermuteKind : std::uint8_t { copy, inner_kept, transpose };
inline constexpr int num_permute_kinds = 3;

/** What a permutation's cost depends on. */
struct PermuteShape {
  PermuteKind kind = PermuteKind::copy;
  extent_t elements = 0;
  /// Length of the contiguous runs it copies: `elements` for a copy, the extent of the trailing
  /// axes that stay in place when the innermost axis is kept, 1 for a transpose.
  extent_t run = 1;
};
PermuteShape permute_shape(int rank, const extent_t* extents, const Axes& axes);

/**
 * Seconds of work = amount / rate, where log2(rate) is a quadratic in the log2 of the sizes, so
 * that one fit follows a kernel from overhead-bound tiny blocks to its peak (a linear model in
 * flops predicted a third of the time of the odd-sized blocks symmetry makes). Sizes are clamped
 * to the calibrated range, beyond which the rate stays flat.
 */
struct CostModel {
  /// log2 GEMM flop rate on [1, x, y, z, x², y², z², xy, xz, yz], x, y, z = log2 m, n, k.
  std::array<double, 10> gemm{33.0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // 8.6 GFLOP/s uncalibrated
  double gemm_max_log2 = 10.0;  ///< extents clamped to [1, 2^gemm_max_log2]
  /// log2 permutation element rate on [copy, inner_kept, transpose, x, x², log2 run length],
  /// x = log2 elements.
  std::array<double, 6> permute{30.0, 29.0, 28.0, 0, 0, 0};  // 1, 0.5, 0.25 G elements/s
  double permute_max_log2 = 21.0;  ///< elements clamped to [1, 2^permute_max_log2]

  double gemm_seconds(extent_t m, extent_t n, extent_t k) const;
  double permute_seconds(const PermuteShape& p) const;
  double permute_seconds(int rank, const extent_t* extents, const Axes& axes) const {
    return permute_seconds(permute_shape(rank, extents, axes));
  }
};

/**
 * A CostModel's predictions, remembered by shape: the inspector asks about the same few block
 * shapes thousands of times per plan, and each evaluation takes logarithms and an exponential.
 * Direct-mapped, so a shape that collides with another is evaluated again, never mispriced.
 */
class CostCache {
 public:
  explicit CostCache(const CostModel& model) : model_(model), entries_(size) {}
  double gemm_seconds(extent_t m, extent_t n, extent_t k);
  double permute_seconds(const PermuteShape& p);
  double permute_seconds(int rank, const extent_t* extents, const Axes& axes) {
    return permute_seconds(permute_shape(rank, extents, axes));
  }

 private:
  static constexpr std::size_t size = 1024;
  struct Entry {
    std::uint64_t key = ~std::uint64_t{0};  // no shape packs to all ones
    double seconds = 0.0;
  };
  template <class Evaluate>
  double lookup(std::uint64_t key, Evaluate&& evaluate);
  const CostModel& model_;
  std::vector<Entry> entries_;
};

/** Median seconds of C[m, n] += A[m, k] B[k, n] for each shape, on one thread. */
std::vector<double> time_gemms(const std::vector<std::array<extent_t, 3>>& shapes, int repeats);
/** Median seconds of permuting a block with these extents by these axes, for each case. */
std::vector<double> time_permutes(const std::vector<std::pair<std::vector<extent_t>, Axes>>& cases,
                                  int repeats);

}  // namespace tilecc
