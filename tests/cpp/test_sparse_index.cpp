// The sparse block index against the dense one on the same shapes: the same canonical blocks,
// and every tile tuple of the grid located to the same block through the same axes and sign;
// and contractions planned over sparse-index shapes giving the dense-index results.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "tilecc/blas.hpp"
#include "tilecc/contract.hpp"
#include "tilecc/ops.hpp"

namespace tilecc {
namespace {

SpacePtr spin_orbitals(int per_spin, extent_t tile, int irreps) {
  std::vector<Orbital> orbs;
  for (const Spin spin : {Spin::alpha, Spin::beta})
    for (int p = 0; p < per_spin; ++p) orbs.push_back({spin, p % irreps, 0.1 * p});
  return std::make_shared<IndexSpace>(orbs, tile);
}

struct Case {
  const char* name;
  int rank;
  std::vector<SymmetryElement> generators;
  std::vector<int> sides;
  int irrep;
};

std::set<std::vector<tile_t>> canonical_tuples(const BlockShape& s) {
  std::set<std::vector<tile_t>> out;
  for (slot_t b = 0; b < s.num_blocks(); ++b)
    out.insert(std::vector<tile_t>(s.block_tiles(b), s.block_tiles(b) + s.rank()));
  return out;
}

TEST(SparseIndex, FindsEveryTupleWhereTheDenseIndexDoes) {
  const Case cases[] = {
      {"antisymmetric pairs", 4, {{{1, 0, 2, 3}, -1}, {{0, 1, 3, 2}, -1}}, {1, 1, -1, -1}, 0},
      {"pair swap, irrep 3", 4, {{{1, 0, 3, 2}, 1}}, {1, 1, -1, -1}, 3},
      {"no symmetry", 3, {}, {0, 0, 0}, 1},
      {"antisymmetric triples",
       6,
       {{{1, 0, 2, 3, 4, 5}, -1},
        {{0, 2, 1, 3, 4, 5}, -1},
        {{0, 1, 2, 4, 3, 5}, -1},
        {{0, 1, 2, 3, 5, 4}, -1}},
       {1, 1, 1, -1, -1, -1},
       0},
  };
  for (const Case& c : cases) {
    const SpacePtr s = spin_orbitals(c.rank == 6 ? 3 : 5, 2, 4);
    const std::vector<SpacePtr> spaces(static_cast<std::size_t>(c.rank), s);
    const PermutationGroup group(c.rank, c.generators);
    const BlockShape dense(spaces, group, c.sides, c.irrep, BlockShape::Index::dense);
    const BlockShape sparse(spaces, group, c.sides, c.irrep, BlockShape::Index::sparse);
    ASSERT_FALSE(dense.sparse_index());
    ASSERT_TRUE(sparse.sparse_index());
    EXPECT_EQ(sparse.num_blocks(), dense.num_blocks()) << c.name;
    EXPECT_EQ(sparse.stored_elements(), dense.stored_elements()) << c.name;
    EXPECT_EQ(sparse.nonzero_elements(), dense.nonzero_elements()) << c.name;
    EXPECT_EQ(canonical_tuples(sparse), canonical_tuples(dense)) << c.name;
    // Every tuple of the grid: both zero, or the same canonical block, axes and sign.
    std::vector<tile_t> t(static_cast<std::size_t>(c.rank), 0);
    std::int64_t located = 0;
    for (;;) {
      const auto d = dense.locate(t.data()), p = sparse.locate(t.data());
      ASSERT_EQ(d.has_value(), p.has_value()) << c.name;
      if (d) {
        ++located;
        const std::vector<tile_t> dt(dense.block_tiles(d->slot),
                                     dense.block_tiles(d->slot) + c.rank);
        const std::vector<tile_t> pt(sparse.block_tiles(p->slot),
                                     sparse.block_tiles(p->slot) + c.rank);
        EXPECT_EQ(dt, pt) << c.name;
        EXPECT_EQ(d->sign, p->sign) << c.name;
        for (int k = 0; k < c.rank; ++k)
          EXPECT_EQ(d->axes[static_cast<std::size_t>(k)], p->axes[static_cast<std::size_t>(k)])
              << c.name;
      }
      int k = c.rank - 1;
      while (k >= 0 && ++t[static_cast<std::size_t>(k)] == s->num_tiles())
        t[static_cast<std::size_t>(k--)] = 0;
      if (k < 0) break;
    }
    // With symmetry, the blocks' images were located too.
    if (group.order() > 1) {
      EXPECT_GT(located, dense.num_blocks()) << c.name;
    }
  }
}

TEST(SparseIndex, ContractionsOverSparseShapesMatchDenseOnes) {
  blas::ensure_loaded();
  const SpacePtr o = spin_orbitals(4, 2, 2), v = spin_orbitals(6, 3, 2);
  const PermutationGroup pairs(4, {{{1, 0, 2, 3}, -1}, {{0, 1, 3, 2}, -1}});
  std::vector<double> results[2];
  for (int which = 0; which < 2; ++which) {
    const auto index = which == 0 ? BlockShape::Index::dense : BlockShape::Index::sparse;
    auto t2 = std::make_shared<BlockShape>(std::vector<SpacePtr>{o, o, v, v}, pairs,
                                           std::vector<int>{}, 0, index);
    auto w = std::make_shared<BlockShape>(std::vector<SpacePtr>{v, v, v, v}, pairs,
                                          std::vector<int>{}, 0, index);
    BlockTensor a(t2), b(w), c(t2);
    fill_random(a, 1);
    fill_random(b, 2);
    ContractionPlan plan({t2, {"i", "j", "a", "b"}, "R"}, {t2, {"i", "j", "c", "d"}, "T"},
                         {w, {"a", "b", "c", "d"}, "W"});
    Executor ex(2);
    contract(plan, 0.5, a, b, c, ex);
    results[which].assign(static_cast<std::size_t>(t2->dense_elements()), 0.0);
    to_dense(c, results[which].data());
  }
  for (std::size_t e = 0; e < results[0].size(); ++e)
    ASSERT_NEAR(results[1][e], results[0][e], 1e-13);
}

}  // namespace
}  // namespace tilecc
