#include "tilecc/cost.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

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

const PermutePricer::Form* PermutePricer::own_order_forms(int rank, const Axes& axes) {
  // Every permutation of up to patterned_rank axes, in lexicographic order, each with its forms
  // for every pattern (2^rank of them, in the block's own order), worked out once, when first
  // needed, by the kernel's own planner on blocks whose long axes have extent 2. The inspector
  // makes a few pricers per plan; working their forms out pattern by pattern for each ran the
  // kernel's general fusion, branch after branch, with the predictor cold from the contractions.
  struct Table {
    std::vector<Form> forms;
    std::array<std::size_t, patterned_rank + 1> first{};  // by rank
    Table() {
      for (int r = 0; r <= patterned_rank; ++r) {
        first[static_cast<std::size_t>(r)] = forms.size();
        std::array<int, patterned_rank> order{};
        std::iota(order.begin(), order.end(), 0);
        do {
          Axes perm{};
          std::copy(order.begin(), order.end(), perm.begin());
          for (unsigned pattern = 0; pattern < 1u << r; ++pattern) {
            extent_t extents[max_rank]{};
            for (int k = 0; k < r; ++k) extents[k] = (pattern >> k & 1u) != 0 ? 2 : 1;
            const kernels::PermuteLoops loops = kernels::permute_loops(r, extents, perm);
            forms.push_back(
                {loops.inner_axes, permute_kind(loops), loops.runs, loops.fused_rank > 0});
          }
        } while (std::next_permutation(order.begin(), order.begin() + r));
      }
    }
  };
  static const Table table;
  // The place of `axes` in lexicographic order: its digits in the factorial number system.
  std::size_t index = 0;
  for (int i = 0; i < rank; ++i) {
    std::size_t smaller_after = 0;
    for (int j = i + 1; j < rank; ++j)
      smaller_after +=
          axes[static_cast<std::size_t>(j)] < axes[static_cast<std::size_t>(i)] ? 1 : 0;
    index = index * static_cast<std::size_t>(rank - i) + smaller_after;
  }
  return &table.forms[table.first[static_cast<std::size_t>(rank)] + (index << rank)];
}

PermutePricer::PermutePricer(const CostModel& model, int rank, const Axes& axes, const Axes& from)
    : model_(&model),
      rank_(rank),
      axes_(axes),
      from_(from),
      price_(by_rank[static_cast<std::size_t>(rank)]) {
  if (rank > patterned_rank) return;
  const Form* own = own_order_forms(rank, axes);
  const unsigned patterns = 1u << rank;
  if (from == own_order) {
    std::copy_n(own, patterns, forms_.begin());
    return;
  }
  // Patterns and inner axes told as positions in `given`, which are from_'s.
  for (unsigned pattern = 0; pattern < patterns; ++pattern) {
    unsigned own_pattern = 0;
    for (int k = 0; k < rank; ++k)
      own_pattern |= (pattern >> from_[static_cast<std::size_t>(k)] & 1u) << k;
    Form f = own[own_pattern];
    unsigned inner_axes = 0;
    for (int k = 0; k < rank; ++k)
      inner_axes |= (f.inner_axes >> k & 1u) << from_[static_cast<std::size_t>(k)];
    f.inner_axes = inner_axes;
    forms_[pattern] = f;
  }
}

template <int rank>
void PermutePricer::price_blocks_of_rank(std::int64_t count, const extent_t* extents,
                                         const extent_t* sizes, const std::uint8_t* long_axes,
                                         double* prices) const {
  // price<rank> for every block, with the products of extents taken in doubles (exact: they stay
  // below 2^53) and its choices as selects. (Calling price<rank> per block, its choices as
  // integer masks, ran slower here: in slot order the patterns of a shape's blocks predict well,
  // so the branches cost little.)
  for (std::int64_t s = 0; s < count; ++s) {
    const Form& f = forms_[long_axes[s]];
    double inner = 1.0, outer = 1.0;
    for (int p = 0; p < rank; ++p) {
      const auto e = static_cast<double>(extents[s * rank + p]);
      const bool in = (f.inner_axes >> p & 1u) != 0;
      inner *= in ? e : 1.0;
      outer *= in ? 1.0 : e;
    }
    const extent_t loops = f.fused ? kernels::inner_loops(f.runs, static_cast<extent_t>(outer),
                                                          static_cast<extent_t>(inner))
                                   : 1;
    prices[s] = model_->permute_seconds(PermuteShape{f.kind, sizes[s], loops});
  }
  // Empty blocks, priced the general way (price<rank> does the same).
  for (std::int64_t s = 0; s < count; ++s)
    if (sizes[s] == 0) [[unlikely]]
      prices[s] = general(rank, extents + s * rank);
}

void PermutePricer::price_blocks(std::int64_t count, const extent_t* extents, const extent_t* sizes,
                                 const std::uint8_t* long_axes, double* prices) const {
  static_assert(patterned_rank == 4, "a case for every patterned rank");
  switch (rank_) {
    case 0:
      return price_blocks_of_rank<0>(count, extents, sizes, long_axes, prices);
    case 1:
      return price_blocks_of_rank<1>(count, extents, sizes, long_axes, prices);
    case 2:
      return price_blocks_of_rank<2>(count, extents, sizes, long_axes, prices);
    case 3:
      return price_blocks_of_rank<3>(count, extents, sizes, long_axes, prices);
    case 4:
      return price_blocks_of_rank<4>(count, extents, sizes, long_axes, prices);
    default:  // as price<rank> does above patterned_rank
      for (std::int64_t s = 0; s < count; ++s) prices[s] = general(rank_, extents + s * rank_);
  }
}

double PermutePricer::general(int rank, const extent_t* given) const {
  extent_t extents[max_rank]{};
  for (int k = 0; k < rank; ++k) extents[k] = given[from_[k]];
  return model_->permute_seconds(rank, extents, axes_);
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
