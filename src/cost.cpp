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

}  // namespace

PermuteShape permute_shape(int rank, const extent_t* extents, const Axes& axes) {
  const kernels::PermuteLoops loops = kernels::permute_loops(rank, extents, axes);
  PermuteShape p;
  p.elements = loops.elements;
  p.inner_loops = loops.inner_loops;
  p.kind = loops.fused_rank <= 1 ? PermuteKind::copy
           : loops.runs          ? PermuteKind::runs
                                 : PermuteKind::transpose;
  return p;
}

double CostModel::gemm_seconds(extent_t m, extent_t n, extent_t k) const {
  const auto x = static_cast<double>(m), y = static_cast<double>(n), z = static_cast<double>(k);
  const std::array<double, 8> work{1.0, x * y * z, x * z, z * y, x * y, x, y, z};
  double seconds = 0.0;
  for (std::size_t i = 0; i < work.size(); ++i) seconds += gemm[i] * work[i];
  return seconds;
}

double CostModel::permute_seconds(const PermuteShape& p) const {
  return permute[0] +
         permute[1 + static_cast<std::size_t>(p.kind)] * static_cast<double>(p.elements) +
         permute[4] * static_cast<double>(p.inner_loops);
}

CostCache& CostCache::of(const CostModel& model) {
  thread_local CostCache cache(model);
  if (cache.model_ != model) cache = CostCache(model);
  return cache;
}

template <class Evaluate>
double CostCache::lookup(std::uint64_t key, Evaluate&& evaluate) {
  Entry& e = entries_[(key * 0x9E3779B97F4A7C15ULL) >> 54];  // top 10 bits: one of 1024
  if (e.key != key) e = Entry{key, evaluate()};
  return e.seconds;
}

double CostCache::gemm_seconds(extent_t m, extent_t n, extent_t k) {
  // Key: a tag bit, then m, n and k in 21 bits each; larger extents are not cached. The limit
  // stops one short of 2^21 so that no key is all ones, the mark of an empty entry.
  constexpr extent_t limit = (extent_t{1} << 21) - 1;
  if (m >= limit || n >= limit || k >= limit || m < 0 || n < 0 || k < 0)
    return model_.gemm_seconds(m, n, k);
  const std::uint64_t key = std::uint64_t{1} << 63 | static_cast<std::uint64_t>(m) << 42 |
                            static_cast<std::uint64_t>(n) << 21 | static_cast<std::uint64_t>(k);
  return lookup(key, [&] { return model_.gemm_seconds(m, n, k); });
}

double CostCache::permute_seconds(const PermuteShape& p) {
  // Key: tag bit 0, the kind in 2 bits, the elements in 30 and the inner loops in 31.
  if (p.elements >= extent_t{1} << 30 || p.inner_loops >= extent_t{1} << 31 || p.elements < 0 ||
      p.inner_loops < 0)
    return model_.permute_seconds(p);
  const std::uint64_t key = static_cast<std::uint64_t>(p.kind) << 61 |
                            static_cast<std::uint64_t>(p.elements) << 31 |
                            static_cast<std::uint64_t>(p.inner_loops);
  return lookup(key, [&] { return model_.permute_seconds(p); });
}

double CostCache::permute_seconds(int rank, const extent_t* extents, const Axes& axes) {
  // Key: 0b011 in the top three bits (shape keys have 0b1 or 0b0 followed by a kind below 3),
  // the rank in 3 bits, each axis in 3 and each extent in 11.
  constexpr int max_packed_rank = 4;
  constexpr extent_t extent_limit = 2048;
  bool packs = rank <= max_packed_rank;
  std::uint64_t key = std::uint64_t{3} << 61 | static_cast<std::uint64_t>(rank) << 56;
  for (int k = 0; k < rank && packs; ++k) {
    packs = extents[k] >= 0 && extents[k] < extent_limit;
    key |= static_cast<std::uint64_t>(axes[static_cast<std::size_t>(k)]) << (44 + 3 * k) |
           static_cast<std::uint64_t>(extents[k]) << (11 * k);
  }
  if (!packs) return permute_seconds(permute_shape(rank, extents, axes));
  return lookup(key, [&] { return model_.permute_seconds(permute_shape(rank, extents, axes)); });
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
