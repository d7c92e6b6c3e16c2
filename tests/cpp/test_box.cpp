// Dense boxes read through the store: equal to the slice of to_dense's dense copy (which reads
// resident blocks, not the protocol) for an antisymmetric spin-orbital tensor with point-group
// symmetry, and every block read is counted: one fetch per non-zero tile tuple in the box.
#include <gtest/gtest.h>

#include <vector>

#include "test_shapes.hpp"
#include "tilecc/box.hpp"
#include "tilecc/error.hpp"
#include "tilecc/ops.hpp"

namespace tilecc {
namespace {

// Alpha then beta orbitals, irreps cycling through 0..3 in each spin, cut into tiles of 2.
SpacePtr spin_orbitals(int per_spin) {
  std::vector<Orbital> orbs;
  for (Spin spin : {Spin::alpha, Spin::beta})
    for (int p = 0; p < per_spin; ++p) orbs.push_back({spin, p % 4, 0.0});
  return std::make_shared<IndexSpace>(orbs, 2);
}

struct Antisymmetric : ::testing::TestWithParam<const char*> {
  SpacePtr o = spin_orbitals(5), v = spin_orbitals(7);
  ShapePtr shape = std::make_shared<BlockShape>(
      std::vector<SpacePtr>{o, o, v, v},
      PermutationGroup(4, {{{1, 0, 2, 3}, -1}, {{0, 1, 3, 2}, -1}}), std::vector<int>{});
};

TEST_P(Antisymmetric, BoxesEqualTheDenseSlice) {
  BlockTensor t(shape, GetParam());
  fill_random(t, 7);
  const std::vector<double> dense = testing::dense(t);
  EXPECT_EQ(read_dense(t), dense);

  const extent_t no = o->size(), nv = v->size();
  for (tile_t p = 0; p < o->num_tiles(); ++p) {
    TileBox box = whole(*shape);
    box.first[0] = p, box.last[0] = p + 1;  // one occupied tile: a slab t[p, :, :, :]
    box.first[2] = 1, box.last[2] = 4;      // and virtual tiles 1..3 of index 2
    const extent_t p0 = o->tile(p).offset, np = o->tile(p).extent;
    const extent_t a0 = v->tile(1).offset, na = box_extent(*shape, box, 2);
    ASSERT_EQ(box_extent(*shape, box, 0), np);
    std::vector<double> slab(static_cast<std::size_t>(np * no * na * nv), -1.0);

    t.store().transfers().reset();
    read_box(t, box, slab.data());
    std::int64_t fetches = 0, bytes = 0;
    TileTuple tiles{};
    for (tiles[0] = box.first[0]; tiles[0] < box.last[0]; ++tiles[0])
      for (tiles[1] = box.first[1]; tiles[1] < box.last[1]; ++tiles[1])
        for (tiles[2] = box.first[2]; tiles[2] < box.last[2]; ++tiles[2])
          for (tiles[3] = box.first[3]; tiles[3] < box.last[3]; ++tiles[3])
            if (const auto ref = shape->locate(tiles.data())) {
              ++fetches;
              bytes += shape->block_size(ref->slot) * 8;
            }
    const auto counted = t.store().transfers().totals();
    const auto kind =
        static_cast<std::size_t>(t.store().zero_copy() ? Transfer::view : Transfer::copy);
    EXPECT_EQ(counted.calls[kind], fetches);
    EXPECT_EQ(counted.bytes[kind], bytes);

    for (extent_t i = 0; i < np; ++i)
      for (extent_t j = 0; j < no; ++j)
        for (extent_t a = 0; a < na; ++a)
          for (extent_t b = 0; b < nv; ++b)
            ASSERT_EQ(
                slab[static_cast<std::size_t>(((i * no + j) * na + a) * nv + b)],
                dense[static_cast<std::size_t>((((p0 + i) * no + j) * nv + a0 + a) * nv + b)]);
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, Antisymmetric, ::testing::Values("memory", "copy"));

TEST(Box, TilesOutsideTheSpaceAreRefused) {
  auto o = testing::space(4, 2, 1);
  BlockTensor t(testing::shape({o, o}));
  TileBox box = whole(t.shape());
  box.last[1] = 3;
  std::vector<double> out(16);
  EXPECT_THROW(read_box(t, box, out.data()), InputError);
}

}  // namespace
}  // namespace tilecc
