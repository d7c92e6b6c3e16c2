// The fast permutation kernel against its reference twin: random ranks, extents, axes, alpha,
// beta. The seed is printed; TILECC_TEST_SEED replays one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <random>

#include "tilecc/kernels/permute.hpp"

namespace tilecc {
namespace {

unsigned test_seed() {
  if (const char* s = std::getenv("TILECC_TEST_SEED")) return static_cast<unsigned>(std::atoi(s));
  return std::random_device{}();
}

TEST(Permute, MatchesReferenceOnRandomCases) {
  const unsigned seed = test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (replay with TILECC_TEST_SEED)");
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 400; ++trial) {
    const int rank = std::uniform_int_distribution<int>(0, 6)(rng);
    extent_t extents[max_rank];
    extent_t size = 1;
    for (int k = 0; k < rank; ++k) {
      extents[k] =
          std::uniform_int_distribution<int>(1, rank <= 2 ? 70 : (rank <= 4 ? 12 : 5))(rng);
      size *= extents[k];
    }
    Axes axes{};
    std::iota(axes.begin(), axes.end(), std::int8_t{0});  // identity; the first rank are shuffled
    std::shuffle(axes.begin(), axes.begin() + rank, rng);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> src(static_cast<std::size_t>(size)), fast(src.size()), ref(src.size());
    for (double& x : src) x = u(rng);
    for (std::size_t e = 0; e < fast.size(); ++e) fast[e] = ref[e] = u(rng);
    const double betas[] = {0.0, 1.0, -0.5};
    const double alpha = u(rng), beta = betas[trial % 3];
    kernels::permute(rank, extents, axes, alpha, src.data(), beta, fast.data());
    kernels::permute_reference(rank, extents, axes, alpha, src.data(), beta, ref.data());
    for (std::size_t e = 0; e < fast.size(); ++e)
      ASSERT_NEAR(fast[e], ref[e], 4e-16 * (1.0 + std::abs(ref[e])))
          << "trial " << trial << " element " << e;
  }
}

TEST(Permute, ReferenceTransposesAMatrix) {
  const extent_t extents[2] = {2, 3};
  const double src[6] = {1, 2, 3, 4, 5, 6};
  double dst[6] = {};
  Axes axes{};
  axes[0] = 1;
  axes[1] = 0;
  kernels::permute_reference(2, extents, axes, 1.0, src, 0.0, dst);
  const double expected[6] = {1, 4, 2, 5, 3, 6};
  for (int e = 0; e < 6; ++e) EXPECT_EQ(dst[e], expected[e]);
}

}  // namespace
}  // namespace tilecc
