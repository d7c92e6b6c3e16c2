#include "tilecc/cost.hpp"

#include <algorithm>

#include "tilecc/blas.hpp"
#include "tilecc/error.hpp"
#include "tilecc/kernels/permute.hpp"
#include "tilecc/trace.hpp"

namespace tilecc {
namespace {

template <class Kernel>
double median_seconds(int repeats, Kernel&& kernel) {
  kernel();  // warm the caches and the code paths once
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

PermuteKind permute_kind(int rank, const Axes& axes) {
  bool identity = true;
  for (int k = 0; k < rank; ++k) identity = identity && axes[static_cast<std::size_t>(k)] == k;
  if (identity) return PermuteKind::copy;
  return rank > 0 && axes[static_cast<std::size_t>(rank - 1)] == rank - 1 ? PermuteKind::inner_kept
                                                                           : PermuteKind::transpose;
}

double CostModel::gemm_seconds(extent_t m, extent_t n, extent_t k) const {
  const auto dm = static_cast<double>(m), dn = static_cast<double>(n), dk = static_cast<double>(k);
  return gemm[0] + gemm[1] * 2.0 * dm * dn * dk + gemm[2] * (dm * dk + dk * dn + dm * dn);
}

double CostModel::permute_seconds(extent_t elements, PermuteKind kind) const {
  return permute_overhead +
         permute_per_element[static_cast<std::size_t>(kind)] * static_cast<double>(elements);
}

std::vector<double> time_gemms(const std::vector<std::array<extent_t, 3>>& shapes, int repeats) {
  TILECC_CHECK(repeats >= 1, "time_gemms needs at least one repeat, got ", repeats, ".");
  blas::ensure_loaded();
  blas::set_threads(1);
  std::vector<double> seconds;
  for (const auto& [m, n, k] : shapes) {
    TILECC_CHECK(m > 0 && n > 0 && k > 0, "time_gemms: every extent must be positive.");
    std::vector<double> a(static_cast<std::size_t>(m * k), 0.5), b(static_cast<std::size_t>(k * n), 0.25),
        c(static_cast<std::size_t>(m * n), 0.0);
    seconds.push_back(median_seconds(repeats, [&] {
      blas::gemm(false, false, m, n, k, 1.0, a.data(), k, b.data(), n, 1.0, c.data(), n);
    }));
  }
  return seconds;
}

std::vector<double> time_permutes(const std::vector<std::pair<std::vector<extent_t>, Axes>>& cases,
                                  int repeats) {
  TILECC_CHECK(repeats >= 1, "time_permutes needs at least one repeat, got ", repeats, ".");
  std::vector<double> seconds;
  for (const auto& [extents, axes] : cases) {
    const int rank = static_cast<int>(extents.size());
    TILECC_CHECK(rank >= 1 && rank <= max_rank, "time_permutes: rank must be 1..", max_rank, ".");
    extent_t size = 1;
    for (extent_t e : extents) size *= e;
    std::vector<double> src(static_cast<std::size_t>(size), 1.0), dst(src.size(), 0.0);
    seconds.push_back(median_seconds(repeats, [&] {
      kernels::permute(rank, extents.data(), axes, 1.0, src.data(), 0.0, dst.data());
    }));
  }
  return seconds;
}

}  // namespace tilecc
