// BlockShape: canonical blocks against brute force, locate() consistency, group closure.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "tilecc/error.hpp"
#include "tilecc/shape.hpp"

namespace tilecc {
namespace {

SpacePtr random_space(std::mt19937& rng, int n, bool spin, int irreps, extent_t tile) {
  std::vector<Orbital> orbs;
  std::uniform_int_distribution<int> irrep(0, irreps - 1);
  for (int p = 0; p < n; ++p) orbs.push_back({spin ? Spin::alpha : Spin::none, irrep(rng), 0.0});
  if (spin)
    for (int p = 0; p < n; ++p) orbs.push_back({Spin::beta, irrep(rng), 0.0});
  return std::make_shared<IndexSpace>(orbs, tile);
}

TEST(PermutationGroup, ClosesAntisymmetricPairsAndEightfold) {
  PermutationGroup t2(4, {{{1, 0, 2, 3}, -1}, {{0, 1, 3, 2}, -1}});
  EXPECT_EQ(t2.order(), 4u);
  PermutationGroup eri(4, {{{1, 0, 2, 3}, 1}, {{0, 1, 3, 2}, 1}, {{2, 3, 0, 1}, 1}});
  EXPECT_EQ(eri.order(), 8u);
  EXPECT_THROW(PermutationGroup(2, {{{1, 0}, 1}, {{1, 0}, -1}}), InputError);
  EXPECT_THROW(PermutationGroup(2, {{{0, 0}, 1}}), InputError);
}

// Brute force: the orbit representatives of allowed tuples are exactly the stored blocks, and
// locate() of every allowed tuple names a block of the same orbit with that element's sign; each
// stored block's size and pattern of long axes are those of its tiles.
TEST(BlockShape, CanonicalBlocksMatchBruteForce) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 30; ++trial) {
    const bool spin = trial % 2 == 0;
    auto o = random_space(rng, 1 + trial % 4, spin, 4, 1 + trial % 3);
    auto v = random_space(rng, 2 + trial % 5, spin, 4, 1 + trial % 4);
    BlockShape s({o, o, v, v}, PermutationGroup(4, {{{1, 0, 2, 3}, -1}, {{0, 1, 3, 2}, -1}}));
    std::set<std::vector<tile_t>> canonical;
    extent_t allowed_elements = 0;
    for (tile_t i = 0; i < o->num_tiles(); ++i)
      for (tile_t j = 0; j < o->num_tiles(); ++j)
        for (tile_t a = 0; a < v->num_tiles(); ++a)
          for (tile_t b = 0; b < v->num_tiles(); ++b) {
            const tile_t t[4] = {i, j, a, b};
            const int sz = static_cast<int>(o->tile(i).spin) + static_cast<int>(o->tile(j).spin) -
                           static_cast<int>(v->tile(a).spin) - static_cast<int>(v->tile(b).spin);
            const int ir =
                o->tile(i).irrep ^ o->tile(j).irrep ^ v->tile(a).irrep ^ v->tile(b).irrep;
            ASSERT_EQ(s.allowed(t), sz == 0 && ir == 0);
            if (!s.allowed(t)) {
              EXPECT_FALSE(s.locate(t).has_value());
              continue;
            }
            allowed_elements +=
                o->tile(i).extent * o->tile(j).extent * v->tile(a).extent * v->tile(b).extent;
            canonical.insert({std::min(i, j), std::max(i, j), std::min(a, b), std::max(a, b)});
            const BlockRef ref = *s.locate(t);
            const tile_t* c = s.block_tiles(ref.slot);
            // axes map the block onto the stored canonical block: tile of axis j is c[axes[j]].
            for (int k = 0; k < 4; ++k) EXPECT_EQ(t[k], c[ref.axes[static_cast<std::size_t>(k)]]);
            const int swaps = (i > j ? 1 : 0) + (a > b ? 1 : 0);
            EXPECT_EQ(ref.sign, swaps % 2 == 0 ? 1 : -1);
          }
    EXPECT_EQ(static_cast<std::size_t>(s.num_blocks()), canonical.size());
    EXPECT_EQ(s.nonzero_elements(), allowed_elements);
    for (slot_t b = 0; b < s.num_blocks(); ++b) {
      extent_t size = 1;
      unsigned long_axes = 0;
      for (int k = 0; k < 4; ++k) {
        const extent_t extent = s.space(k).tile(s.block_tiles(b)[k]).extent;
        size *= extent;
        if (extent > 1) long_axes |= 1u << k;
      }
      EXPECT_EQ(s.block_size(b), size);
      EXPECT_EQ(s.block_long_axes(b), long_axes);
    }
  }
}

TEST(BlockShape, RefusesGeneratorsAcrossSpacesOrSides) {
  std::mt19937 rng(1);
  auto o = random_space(rng, 2, true, 1, 2);
  auto v = random_space(rng, 3, true, 1, 2);
  EXPECT_THROW(BlockShape({o, v}, PermutationGroup(2, {{{1, 0}, -1}})), InputError);
  EXPECT_THROW(BlockShape({o, o, o, o}, PermutationGroup(4, {{{0, 2, 1, 3}, 1}})), InputError);
  EXPECT_THROW(BlockShape({o, o}, PermutationGroup(2), {1}), InputError);
}

TEST(BlockShape, RefusesATileGridBeyondItsBlockIndex) {
  // 4 indices of 200 one-orbital tiles: 1.6e9 tile tuples, more than max_tile_tuples (2^27).
  auto v = std::make_shared<IndexSpace>(std::vector<Orbital>(200), 1, "v");
  try {
    BlockShape({v, v, v, v}, PermutationGroup(4));
    FAIL() << "a grid of 1.6e9 tuples was accepted";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("[v, v, v, v] has 1600000000 tile tuples"), std::string::npos) << what;
    EXPECT_NE(what.find("use larger tiles"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace tilecc
