// PermutePricer against the cost model it stands in for: the same seconds, to the last bit, for
// random blocks of every rank, with extent-1 axes in every pattern and empty blocks, many blocks
// per pricer so that the patterns it keeps are used again. The seed is printed; TILECC_TEST_SEED
// replays one.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "test_seed.hpp"
#include "tilecc/cost.hpp"

namespace tilecc {
namespace {

TEST(PermutePricer, PricesLikeTheCostModel) {
  const unsigned seed = test_seed();
  SCOPED_TRACE(replay_note(seed));
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  CostModel model;
  model.permute = {1e-7, 1.5e-9, 2e-9, 2.5e-9, 7e-9};  // every term counts
  for (int layout = 0; layout < 300; ++layout) {
    const int rank = pick(0, 6);
    Axes axes{};
    std::iota(axes.begin(), axes.end(), std::int8_t{0});
    std::shuffle(axes.begin(), axes.begin() + rank, rng);
    PermutePricer price(model, rank, axes);
    for (int block = 0; block < 40; ++block) {
      extent_t extents[max_rank];
      for (int k = 0; k < rank; ++k) {
        const int kind = pick(0, 20);
        extents[k] = kind == 0 ? 0 : kind < 8 ? 1 : pick(2, 40);
      }
      ASSERT_EQ(price(extents), model.permute_seconds(rank, extents, axes))
          << "layout " << layout << " block " << block;
    }
  }
}

}  // namespace
}  // namespace tilecc
