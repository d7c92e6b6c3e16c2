#include "tilecc/cost.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>
#endif

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

#if defined(__AVX512F__) && defined(__AVX512DQ__)
// GCC 12 takes the undefined pass-through operands inside the intrinsics for uninitialised values.
#pragma GCC diagnostic push
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
std::int64_t PermutePricer::price_rank4_blocks_avx512(std::int64_t count, const extent_t* extents,
                                                      const extent_t* sizes,
                                                      const std::uint8_t* long_axes,
                                                      double* prices) const {
  // The loop below price_blocks_of_rank's, eight blocks at a time, all in doubles (exact: the
  // products stay below 2^53), where GCC leaves the scalar loop scalar. Each pattern's form
  // takes 4 bits of two words, found by a shift rather than a table lookup per block: its inner
  // axes in one, and whether it is fused, whether it copies runs, and its kind in the other.
  static_assert(patterned_rank == 4, "4 bits for each of the 16 patterns of rank 4 fill a word");
  std::uint64_t inner_words = 0, form_words = 0;
  for (unsigned pattern = 0; pattern < forms_.size(); ++pattern) {
    const Form& f = forms_[pattern];
    inner_words |= std::uint64_t{f.inner_axes} << (4 * pattern);
    form_words |=
        std::uint64_t{(f.fused ? 1u : 0u) | (f.runs ? 2u : 0u) | static_cast<unsigned>(f.kind) << 2}
        << (4 * pattern);
  }
  const __m512i inner_table = _mm512_set1_epi64(static_cast<long long>(inner_words));
  const __m512i form_table = _mm512_set1_epi64(static_cast<long long>(form_words));
  // CostModel::permute_seconds, lane by lane: per call, per element of the kind, per inner loop.
  const std::array<double, 5>& c = model_->permute;
  const __m512d per_call = _mm512_set1_pd(c[0]), per_loop = _mm512_set1_pd(c[4]);
  const __m512d per_element = _mm512_setr_pd(c[1], c[2], c[3], 0, 0, 0, 0, 0);  // by kind
  const __m512d one = _mm512_set1_pd(1.0);
  const __m512d tile_minus_one = _mm512_set1_pd(static_cast<double>(kernels::transpose_tile - 1));
  const __m512d per_tile = _mm512_set1_pd(1.0 / static_cast<double>(kernels::transpose_tile));
  // Eight blocks' extents, block after block, turned into one vector per axis.
  const __m512i pairs_low = _mm512_setr_epi64(0, 4, 8, 12, 1, 5, 9, 13);
  const __m512i pairs_high = _mm512_setr_epi64(2, 6, 10, 14, 3, 7, 11, 15);
  const __m512i halves_low = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11);
  const __m512i halves_high = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
  std::int64_t s = 0;
  for (; s + 8 <= count; s += 8) {
    const __m512i shift = _mm512_slli_epi64(
        _mm512_cvtepu8_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(long_axes + s))), 2);
    const __m512i inner_axes = _mm512_srlv_epi64(inner_table, shift);
    const __m512i form = _mm512_srlv_epi64(form_table, shift);
    const extent_t* e = extents + 4 * s;
    const __m512i b01 = _mm512_loadu_si512(e), b23 = _mm512_loadu_si512(e + 8);
    const __m512i b45 = _mm512_loadu_si512(e + 16), b67 = _mm512_loadu_si512(e + 24);
    const __m512i a01_0123 = _mm512_permutex2var_epi64(b01, pairs_low, b23);  // axes 0, 1
    const __m512i a23_0123 = _mm512_permutex2var_epi64(b01, pairs_high, b23);
    const __m512i a01_4567 = _mm512_permutex2var_epi64(b45, pairs_low, b67);
    const __m512i a23_4567 = _mm512_permutex2var_epi64(b45, pairs_high, b67);
    const __m512i axis[4] = {_mm512_permutex2var_epi64(a01_0123, halves_low, a01_4567),
                             _mm512_permutex2var_epi64(a01_0123, halves_high, a01_4567),
                             _mm512_permutex2var_epi64(a23_0123, halves_low, a23_4567),
                             _mm512_permutex2var_epi64(a23_0123, halves_high, a23_4567)};
    __m512d inner = one, outer = one;
    for (int p = 0; p < 4; ++p) {
      const __m512d extent = _mm512_cvtepi64_pd(axis[p]);
      const __mmask8 in = _mm512_test_epi64_mask(inner_axes, _mm512_set1_epi64(1ll << p));
      inner = _mm512_mask_mul_pd(inner, in, inner, extent);
      outer = _mm512_mask_mul_pd(outer, static_cast<__mmask8>(~in), outer, extent);
    }
    // kernels::inner_loops: a loop per run, or per row of each transposed square.
    const __m512d squares = _mm512_roundscale_pd(
        _mm512_mul_pd(_mm512_add_pd(inner, tile_minus_one), per_tile), _MM_FROUND_TO_NEG_INF);
    const __mmask8 fused = _mm512_test_epi64_mask(form, _mm512_set1_epi64(1));
    const __mmask8 runs = _mm512_test_epi64_mask(form, _mm512_set1_epi64(2));
    const __m512d loops = _mm512_mask_blend_pd(
        fused, one, _mm512_mask_mul_pd(outer, static_cast<__mmask8>(~runs), outer, squares));
    const __m512d element = _mm512_permutexvar_pd(
        _mm512_and_si512(_mm512_srli_epi64(form, 2), _mm512_set1_epi64(3)), per_element);
    const __m512d elements = _mm512_cvtepi64_pd(_mm512_loadu_si512(sizes + s));
    _mm512_storeu_pd(
        prices + s, _mm512_fmadd_pd(per_loop, loops, _mm512_fmadd_pd(element, elements, per_call)));
  }
  return s;
}
#pragma GCC diagnostic pop
#endif

template <int rank>
void PermutePricer::price_blocks_of_rank(std::int64_t count, const extent_t* extents,
                                         const extent_t* sizes, const std::uint8_t* long_axes,
                                         double* prices) const {
  // Where the CPU has AVX-512, the blocks of 4-index tensors (most of a CC plan's) go eight at a
  // time, and this loop prices the rest.
  std::int64_t first = 0;
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  if constexpr (rank == 4)
    first = price_rank4_blocks_avx512(count, extents, sizes, long_axes, prices);
#endif
  // price<rank> for every block, with the products of extents taken in doubles (exact: they stay
  // below 2^53) and its choices as selects. (Calling price<rank> per block, its choices as
  // integer masks, ran slower here: in slot order the patterns of a shape's blocks predict well,
  // so the branches cost little.)
  for (std::int64_t s = first; s < count; ++s) {
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
