#include <gtest/gtest.h>

#include <vector>

#include "tilecc/cost.hpp"

using namespace tilecc;

namespace {
CostModel calibrated_like() {
  CostModel m;
  m.gemm = {2e-7, 7e-11, 9e-10, 1e-9, 1.3e-9, 4e-9, 0.0, 1e-9};
  m.permute = {7e-8, 1.6e-9, 2.1e-9, 2.5e-9, 6.9e-9};
  return m;
}
}  // namespace

// The cache answers exactly what the model says: for blocks whose extents and axes pack into a
// key, for ones that do not (rank 5, an extent of 2048), for GEMMs, and again after colliding
// entries have replaced one another in its 1024 slots.
TEST(CostCache, AnswersExactlyWhatTheModelSays) {
  const CostModel model = calibrated_like();
  CostCache& cache = CostCache::of(model);
  struct Case {
    std::vector<extent_t> extents;
    Axes axes;
  };
  std::vector<Case> cases;
  for (extent_t a = 1; a <= 40; a += 3)
    for (extent_t b = 1; b <= 40; b += 7) {
      cases.push_back({{a, b, 5, 3}, {0, 1, 2, 3}});
      cases.push_back({{a, b, 5, 3}, {1, 0, 3, 2}});
      cases.push_back({{a, b}, {1, 0}});
    }
  cases.push_back({{2, 3, 4, 5, 6}, {4, 3, 2, 1, 0}});
  cases.push_back({{2048, 2}, {1, 0}});
  for (int pass = 0; pass < 2; ++pass)
    for (const Case& c : cases) {
      const int rank = static_cast<int>(c.extents.size());
      EXPECT_EQ(cache.permute_seconds(rank, c.extents.data(), c.axes),
                model.permute_seconds(rank, c.extents.data(), c.axes));
    }
  for (int pass = 0; pass < 2; ++pass)
    for (extent_t m = 1; m < 3000; m = m * 3 + 1)
      for (extent_t n = 1; n < 300; n = n * 2 + 1)
        EXPECT_EQ(cache.gemm_seconds(m, n, 17), model.gemm_seconds(m, n, 17));
  // Extents at the edge of the key: 2^21 - 1 in all three would pack to the empty entry's mark.
  const extent_t edge = (extent_t{1} << 21) - 1;
  for (extent_t k : {edge - 1, edge})
    EXPECT_EQ(cache.gemm_seconds(edge, edge, k), model.gemm_seconds(edge, edge, k));
}

// Each thread's cache belongs to one model: asked for another, it forgets the first one's
// answers.
TEST(CostCache, IsEmptiedForAnotherModel) {
  const CostModel first = calibrated_like();
  CostModel second = first;
  second.permute[3] *= 2.0;
  const extent_t extents[] = {8, 8, 8, 8};
  const Axes transpose{3, 2, 1, 0};
  const double before = CostCache::of(first).permute_seconds(4, extents, transpose);
  const double after = CostCache::of(second).permute_seconds(4, extents, transpose);
  EXPECT_EQ(before, first.permute_seconds(4, extents, transpose));
  EXPECT_EQ(after, second.permute_seconds(4, extents, transpose));
  EXPECT_GT(after, before);
}
