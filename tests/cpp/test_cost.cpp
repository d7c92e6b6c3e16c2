// The cost model's shortcuts against its general formulas, on random input (the seed is printed;
// TILECC_TEST_SEED replays one):
//  - PermutePricer against CostModel::permute_seconds: the same seconds, to the last bit, for
//    random blocks of every rank, with extent-1 axes in every pattern and empty blocks, many blocks
//    per pricer so that each meets several patterns, their extents given in the block's order or
//    in a random other one, with their size and pattern worked out or told; and every block of a
//    shape priced at once (price_blocks), to within 4 units in the last place;
//  - gemm_seconds_per_call against gemm_seconds: what one GEMM of c m rows saves over c GEMMs of
//    m rows;
//  - both for several GEMMs at once against the same GEMMs priced one by one.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "test_random.hpp"
#include "tilecc/cost.hpp"

namespace tilecc {
namespace {

// A permutation model whose every term counts.
CostModel permute_model() {
  CostModel model;
  model.permute = {1e-7, 1.5e-9, 2e-9, 2.5e-9, 7e-9};
  return model;
}

// An extent as blocks have them: now and then 0 (an empty block), often 1, else 2 to 40.
extent_t random_extent(TestRandom& random) {
  const int kind = random.pick(0, 20);
  return kind == 0 ? 0 : kind < 8 ? 1 : random.pick(2, 40);
}

// A block's element count and pattern of extent-1 axes (bit k set: extents[k] is not 1).
std::pair<extent_t, unsigned> size_and_pattern(int rank, const extent_t* extents) {
  extent_t elements = 1;
  unsigned pattern = 0;
  for (int k = 0; k < rank; ++k) {
    elements *= extents[k];
    if (extents[k] != 1) pattern |= 1u << k;
  }
  return {elements, pattern};
}

TEST(PermutePricer, PricesLikeTheCostModel) {
  TestRandom random;
  const CostModel model = permute_model();
  for (int layout = 0; layout < 300; ++layout) {
    const int rank = random.pick(0, 6);
    const Axes axes = random.axes(rank);
    // Every other pricer takes the extents in another order: the block's axis k has extent
    // given[from[k]].
    const bool reordered = layout % 2 == 1;
    const Axes from = random.axes(reordered ? rank : 0);
    PermutePricer price =
        reordered ? PermutePricer(model, rank, axes, from) : PermutePricer(model, rank, axes);
    for (int block = 0; block < 40; ++block) {
      extent_t given[max_rank], extents[max_rank];
      for (int k = 0; k < rank; ++k) given[k] = random_extent(random);
      for (int k = 0; k < rank; ++k) extents[k] = given[from[static_cast<std::size_t>(k)]];
      const double expected = model.permute_seconds(rank, extents, axes);
      // Priced from the extents alone, and with their product and pattern told, in turn.
      const auto [elements, long_axes] = size_and_pattern(rank, given);
      const double priced = block % 2 == 0 ? price(given) : price(given, elements, long_axes);
      ASSERT_EQ(priced, expected) << "layout " << layout << " block " << block;
    }
  }
}

TEST(PermutePricer, PricesAllBlocksAtOnceLikeOneByOne) {
  TestRandom random;
  const CostModel model = permute_model();
  for (int layout = 0; layout < 300; ++layout) {
    const int rank = random.pick(0, 6);
    const Axes axes = random.axes(rank);
    const PermutePricer price(model, rank, axes);
    // A shape's blocks as BlockShape keeps them: extents block by block, sizes, patterns.
    const int blocks = random.pick(0, 60);
    std::vector<extent_t> extents, sizes;
    std::vector<std::uint8_t> long_axes;
    for (int block = 0; block < blocks; ++block) {
      for (int k = 0; k < rank; ++k) extents.push_back(random_extent(random));
      const auto [elements, pattern] =
          size_and_pattern(rank, extents.data() + static_cast<std::ptrdiff_t>(block) * rank);
      sizes.push_back(elements);
      long_axes.push_back(static_cast<std::uint8_t>(pattern));
    }
    std::vector<double> prices(static_cast<std::size_t>(blocks), -1.0);
    price.price_blocks(blocks, extents.data(), sizes.data(), long_axes.data(), prices.data());
    for (int block = 0; block < blocks; ++block) {
      const double expected = model.permute_seconds(
          rank, extents.data() + static_cast<std::ptrdiff_t>(block) * rank, axes);
      // To within 4 units in the last place: the compiler may fuse the multiply-adds of the
      // one-pass loop differently from CostModel's.
      ASSERT_DOUBLE_EQ(prices[static_cast<std::size_t>(block)], expected)
          << "layout " << layout << " block " << block;
    }
  }
}

// A GEMM model whose every term counts, each coefficient drawn from `random`.
CostModel random_gemm_model(TestRandom& random) {
  CostModel model;
  for (double& c : model.gemm)
    c = std::uniform_real_distribution<double>(0.0, 1e-8)(random.engine());
  return model;
}

TEST(CostModel, PerCallTermsAreWhatATallerGemmSaves) {
  TestRandom random;
  const CostModel model = random_gemm_model(random);
  for (int shape = 0; shape < 1000; ++shape) {
    const extent_t m = random.pick(1, 200), n = random.pick(1, 200), k = random.pick(1, 200),
                   copies = random.pick(1, 12);
    const double alone = static_cast<double>(copies) * model.gemm_seconds(m, n, k);
    const double saved = alone - model.gemm_seconds(copies * m, n, k);
    EXPECT_NEAR(saved, static_cast<double>(copies - 1) * model.gemm_seconds_per_call(n, k),
                1e-12 * std::abs(alone) + 1e-300)
        << "m " << m << " n " << n << " k " << k << " copies " << copies;
  }
}

TEST(CostModel, GemmsPricedAtOnceCostWhatTheyCostOneByOne) {
  TestRandom random;
  const CostModel model = random_gemm_model(random);
  for (int task = 0; task < 1000; ++task) {
    const extent_t m = random.pick(1, 200), n = random.pick(1, 200);
    const int calls = random.pick(1, 30);
    extent_t summed_k = 0;
    double one_by_one = 0.0, per_call_one_by_one = 0.0;
    for (int c = 0; c < calls; ++c) {
      const extent_t k = random.pick(1, 200);
      summed_k += k;
      one_by_one += model.gemm_seconds(m, n, k);
      per_call_one_by_one += model.gemm_seconds_per_call(n, k);
    }
    EXPECT_NEAR(model.gemm_seconds(m, n, summed_k, calls), one_by_one, 1e-12 * one_by_one)
        << "m " << m << " n " << n << " calls " << calls;
    EXPECT_NEAR(model.gemm_seconds_per_call(n, summed_k, calls), per_call_one_by_one,
                1e-12 * per_call_one_by_one)
        << "n " << n << " calls " << calls;
  }
}

}  // namespace
}  // namespace tilecc
