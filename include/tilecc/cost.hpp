#pragma once
/** @file Performance models of the two kernels a task runs, GEMM and block permutation, and the
 * micro-benchmarks that calibrate them (paper 001's DGEMM and SORT4 models).
 *
 * The coefficients are data, measured on the machine: tilecc.wisdom fits them to the timings
 * these micro-benchmarks return and keeps them in the wisdom file. An uncalibrated CostModel
 * holds round numbers that only rank tasks by size.
 */
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "tilecc/kernels/permute.hpp"
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

  /** Seconds of `calls` GEMMs C[m, n] += A[m, k_i] B[k_i, n] whose k_i add up to `k` (one GEMM
   *  unless told). The model is linear in k, so the inspector prices all the GEMMs of a task, one
   *  per product, at once. Inline: it does so for every task it plans. */
  double gemm_seconds(extent_t m, extent_t n, extent_t k, std::int64_t calls = 1) const {
    const auto x = static_cast<double>(m), y = static_cast<double>(n), z = static_cast<double>(k);
    // Summed in pairs, so that the adds do not wait on one another.
    return static_cast<double>(calls) *
               ((gemm[0] + gemm[4] * x * y) + (gemm[5] * x + gemm[6] * y)) +
           z * ((gemm[1] * x * y + gemm[2] * x) + (gemm[3] * y + gemm[7]));
  }
  /** The terms of gemm_seconds(m, n, k, calls) that do not grow with m: what running one GEMM of
   *  c m rows, in place of c GEMMs of m rows, saves c - 1 times. */
  double gemm_seconds_per_call(extent_t n, extent_t k, std::int64_t calls = 1) const {
    const auto y = static_cast<double>(n), z = static_cast<double>(k);
    return static_cast<double>(calls) * (gemm[0] + gemm[6] * y) + z * (gemm[3] * y + gemm[7]);
  }
  double permute_seconds(const PermuteShape& p) const {
    return permute[0] +
           permute[1 + static_cast<std::size_t>(p.kind)] * static_cast<double>(p.elements) +
           permute[4] * static_cast<double>(p.inner_loops);
  }
  double permute_seconds(int rank, const extent_t* extents, const Axes& axes) const {
    return permute_seconds(permute_shape(rank, extents, axes));
  }
  bool operator==(const CostModel&) const = default;
};

/**
 * CostModel::permute_seconds for many blocks of one rank permuted by the same axes, in a few
 * multiplications each. How the kernel fuses the axes depends only on which extents are 1, so it
 * is known per such pattern; a block then needs only the products of its extents inside and
 * outside the innermost fused axis. The inspector prices thousands of blocks per plan, in one to
 * a few layouts, where working out the fusion for each took a fifth of its instructions.
 */
class PermutePricer {
 public:
  /** Prices blocks given by their extents in their own axis order. */
  PermutePricer(const CostModel& model, int rank, const Axes& axes)
      : PermutePricer(model, rank, axes, own_order) {}
  /** Prices blocks given by extents in another order: the block's axis k has extent
   *  given[from[k]] (the output's R block, priced from the extents of its block of C). */
  PermutePricer(const CostModel& model, int rank, const Axes& axes, const Axes& from);
  double operator()(const extent_t* given) { return price_(*this, given, -1, 0); }
  /** The same for a block whose element count and pattern of extent-1 axes (bit p set: given[p]
   *  is not 1) are known already, as BlockShape keeps them for its blocks: the inspector prices
   *  thousands of blocks per plan, and working both out for each was 4% of its instructions. */
  double operator()(const extent_t* given, extent_t elements, unsigned long_axes) {
    return price_(*this, given, elements, long_axes);
  }
  /** The price of each of `count` blocks at once, blocks given in their own axis order (a pricer
   *  made without `from`): block s has extents extents[s * rank ..], `sizes[s]` elements and
   *  extent-1 pattern `long_axes[s]`, as BlockShape keeps them. One pass over a shape's blocks,
   *  with no call or memo test per block, costs less than pricing the blocks a plan reads one
   *  call at a time, though a plan reads only some of them. */
  void price_blocks(std::int64_t count, const extent_t* extents, const extent_t* sizes,
                    const std::uint8_t* long_axes, double* prices) const;

 private:
  /** The fused layout of the blocks with one pattern of extent-1 axes. */
  struct Form {
    unsigned inner_axes = 0;  ///< kernels::PermuteLoops::inner_axes, as positions in `given`
    PermuteKind kind = PermuteKind::copy;
    bool runs = true;
    bool fused = false;  ///< some axis has an extent above 1
  };
  /** The forms of the permutation `axes` of rank <= patterned_rank, for blocks given in their
   *  own order, by pattern: 2^rank of them. */
  static const Form* own_order_forms(int rank, const Axes& axes);
  // `from` for extents given in the block's own order.
  static constexpr Axes own_order = [] {
    Axes order{};
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<std::int8_t>(k);
    return order;
  }();
  // The rare path, out of line and reached by a tail call, so that the common one saves no
  // registers: an empty block, priced the general way.
  double general(int rank, const extent_t* given) const;

  // Patterns are kept for blocks of up to this rank (2^4 of them); higher ranks, which CC methods
  // up to CCSD(T) do not permute in bulk, are priced the general way.
  static constexpr int patterned_rank = 4;
  // `elements` below 0: not known yet, worked out here with the pattern.
  template <int rank>
  double price(const extent_t* given, extent_t elements, unsigned long_axes) {
    if constexpr (rank > patterned_rank) {
      return general(rank, given);
    } else {
      if (elements < 0) {
        elements = 1;
        long_axes = 0;
        for (int p = 0; p < rank; ++p) {
          elements *= given[p];
          long_axes |= static_cast<unsigned>(given[p] != 1) << p;
        }
      }
      if (elements == 0) [[unlikely]]
        return general(rank, given);
      const Form& f = forms_[long_axes];
      extent_t inner = 1, outer = 1;  // elements in the innermost fused axis, and outside it
      // Masks rather than choices: which axes are inner changes from block to block, so the
      // branches a choice compiles to are often mispredicted.
      for (int p = 0; p < rank; ++p) {
        const extent_t in = -static_cast<extent_t>(f.inner_axes >> p & 1u);  // all ones or zero
        inner *= 1 + ((given[p] - 1) & in);
        outer *= 1 + ((given[p] - 1) & ~in);
      }
      const extent_t loops = f.fused ? kernels::inner_loops(f.runs, outer, inner) : 1;
      return model_->permute_seconds(PermuteShape{f.kind, elements, loops});
    }
  }
  template <int rank>
  void price_blocks_of_rank(std::int64_t count, const extent_t* extents, const extent_t* sizes,
                            const std::uint8_t* long_axes, double* prices) const;
  // price<rank> for every rank 0..max_rank, indexed by rank, so that its loops unroll. Plain
  // function pointers: a call through a pointer to member first tests whether it is virtual.
  using Price = double (*)(PermutePricer&, const extent_t*, extent_t, unsigned);
  template <int rank>
  static double price_of_rank(PermutePricer& pricer, const extent_t* given, extent_t elements,
                              unsigned long_axes) {
    return pricer.price<rank>(given, elements, long_axes);
  }
  static constexpr auto by_rank = []<std::size_t... r>(std::index_sequence<r...>) {
    return std::array<Price, sizeof...(r)>{&price_of_rank<static_cast<int>(r)>...};
  }(std::make_index_sequence<max_rank + 1>{});

  const CostModel* model_;
  int rank_;
  Axes axes_, from_;
  Price price_;
  // By pattern of extent-1 axes in `given`, every pattern set by the constructor.
  std::array<Form, std::size_t{1} << patterned_rank> forms_{};
};

/** Median seconds of C[m, n] += A[m, k] B[k, n] for each shape, on one thread. */
std::vector<double> time_gemms(const std::vector<std::array<extent_t, 3>>& shapes, int repeats);
/** Median seconds of permuting a block with these extents by these axes, for each case. */
std::vector<double> time_permutes(const std::vector<std::pair<std::vector<extent_t>, Axes>>& cases,
                                  int repeats);

}  // namespace tilecc
