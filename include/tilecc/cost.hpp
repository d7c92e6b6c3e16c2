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
PermuteKind permute_kind(int rank, const Axes& axes);

struct CostModel {
  /// GEMM(m, n, k) seconds = gemm[0] + gemm[1] * 2mnk + gemm[2] * (mk + kn + mn).
  std::array<double, 3> gemm{2e-7, 1e-11, 1e-9};
  /// Permuting e elements of a kind: permute_overhead + permute_per_element[kind] * e.
  double permute_overhead = 1e-7;
  std::array<double, num_permute_kinds> permute_per_element{5e-10, 1e-9, 2e-9};

  double gemm_seconds(extent_t m, extent_t n, extent_t k) const;
  double permute_seconds(extent_t elements, PermuteKind kind) const;
};

/** Median seconds of C[m, n] += A[m, k] B[k, n] for each shape, on one thread. */
std::vector<double> time_gemms(const std::vector<std::array<extent_t, 3>>& shapes, int repeats);
/** Median seconds of permuting a block with these extents by these axes, for each case. */
std::vector<double> time_permutes(const std::vector<std::pair<std::vector<extent_t>, Axes>>& cases,
                                  int repeats);

}  // namespace tilecc
