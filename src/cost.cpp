#include "tilecc/cost.hpp"

#include <algorithm>

#include "tilecc/blas.hpp"
#include "tilecc/error.hpp"
#include "tilecc/kernels/permute.hpp"
#include "tilecc/trace.hpp"

namespace tilecc {
namespace {

// Blocks in a contraction come from tensors larger than a core's caches, not from the buffers of
// the previous call: every repeat reads its operands from a fresh place in a 32 MiB pool, beyond
// the per-core caches but within the last-level one. Calibrated on hot buffers the model
// under-predicted N2/cc-pVTZ CCSD task times, and on a pool beyond the last-level cache it
// over-predicted them; benchmarks/policies/run.py prints the model's error.
class ColdPool {
 public:
  static constexpr std::size_t doubles = std::size_t{1} << 22;  // 32 MiB
  ColdPool() : data_(doubles, 1.0) {}
  /** `n` doubles, at the place after the previous ones (wrapping around). */
  double* take(extent_t n) {
    const auto size = static_cast<std::size_t>(n);
    TILECC_ASSERT(size <= doubles);
    if (next_ + size > doubles) next_ = 0;
    double* p = data_.data() + next_;
    next_ += (size + 7) / 8 * 8;  // next cache line
    return p;
  }

 private:
  std::vector<double> data_;
  std::size_t next_ = 0;
};

template <class Kernel>
double median_seconds(int repeats, Kernel&& kernel) {
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const double t0 = clock_seconds();
    kernel();
    times.push_back(clock_seconds() - t0);
  }
  std::nth_element(times.begin(), times.begin() + repeats / 2, times.end());
  return times[static_cast<std::size_t>(repeats / 2)];
}

PermuteKind permute_kind(const kernels::PermuteLoops& loops) {
  return loops.fused_rank <= 1 ? PermuteKind::copy
         : loops.runs          ? PermuteKind::runs
                               : PermuteKind::transpose;
}

}  // namespace

PermuteShape permute_shape(int rank, const extent_t* extents, const Axes& axes) {
  const kernels::PermuteLoops loops = kernels::permute_loops(rank, extents, axes);
  return PermuteShape{permute_kind(loops), loops.elements, loops.inner_loops};
}

PermutePricer::Form PermutePricer::form(int rank, unsigned long_axes) const {
  // The kernel's loops for a block with this pattern and every other extent 2, with the axes it
  // fuses innermost told as positions in the given extents.
  extent_t extents[max_rank]{};
  for (int k = 0; k < rank; ++k) extents[k] = (long_axes >> from_[k] & 1u) != 0 ? 2 : 1;
  const kernels::PermuteLoops loops = kernels::permute_loops(rank, extents, axes_);
  unsigned inner_axes = 0;
  for (int k = 0; k < rank; ++k)
    if ((loops.inner_axes >> k & 1u) != 0) inner_axes |= 1u << from_[k];
  return Form{inner_axes, permute_kind(loops), loops.runs, loops.fused_rank > 0, true};
}

double PermutePricer::general(int rank, const extent_t* given) const {
  extent_t extents[max_rank];
  for (int k = 0; k < rank; ++k) extents[k] = given[from_[k]];
  return model_->permute_seconds(rank, extents, axes_);
}

double PermutePricer::first_of_pattern(int rank, const extent_t* given, extent_t elements,
                                       unsigned long_axes) {
  forms_[long_axes] = form(rank, long_axes);
  return (*this)(given, elements, long_axes);
}

std::vector<double> time_gemms(const std::vector<std::array<extent_t, 3>>& shapes, int repeats) {
  TILECC_CHECK(repeats >= 1, "time_gemms needs at least one repeat, got ", repeats, ".");
  blas::ensure_loaded();
  blas::set_threads(1);
  ColdPool pool;
  std::vector<double> seconds;
  for (const auto& [m, n, k] : shapes) {
    TILECC_CHECK(
        m > 0 && n > 0 && k > 0 && m * k + k * n + m * n < static_cast<extent_t>(ColdPool::doubles),
        "time_gemms: extents must be positive and the operands fit in 64 MiB.");
    seconds.push_back(median_seconds(repeats, [&] {
      const double* a = pool.take(m * k);
      const double* b = pool.take(k * n);
      double* c = pool.take(m * n);
      blas::gemm(false, false, m, n, k, 1.0, a, k, b, n, 1.0, c, n);
    }));
  }
  return seconds;
}

std::vector<double> time_permutes(const std::vector<std::pair<std::vector<extent_t>, Axes>>& cases,
                                  int repeats) {
  TILECC_CHECK(repeats >= 1, "time_permutes needs at least one repeat, got ", repeats, ".");
  ColdPool pool;
  std::vector<double> seconds;
  for (const auto& [extents, axes] : cases) {
    const int rank = static_cast<int>(extents.size());
    TILECC_CHECK(rank >= 1 && rank <= max_rank, "time_permutes: rank must be 1..", max_rank, ".");
    extent_t size = 1;
    for (extent_t e : extents) size *= e;
    TILECC_CHECK(size > 0 && 2 * size < static_cast<extent_t>(ColdPool::doubles),
                 "time_permutes: blocks must be non-empty and fit in 32 MiB.");
    seconds.push_back(median_seconds(repeats, [&] {
      const double* src = pool.take(size);
      double* dst = pool.take(size);
      kernels::permute(rank, extents.data(), axes, 1.0, src, 0.0, dst);
    }));
  }
  return seconds;
}

}  // namespace tilecc
