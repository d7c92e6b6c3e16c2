// BlockShape: canonical blocks against brute force, locate() consistency (also through every
// element of a 24-element group), group closure, and the grids its block index cannot hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
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

// A group of 24 elements takes 5 bits of each block index entry: every tuple of four distinct
// tiles is located through its own element, which maps it onto its sorted (canonical) tuple with
// the sign of the sorting permutation.
TEST(BlockShape, LocatesThroughEveryElementOfAFullyAntisymmetricGroup) {
  std::mt19937 rng(3);
  auto o = random_space(rng, 12, false, 1, 2);  // six tiles of one irrep
  ASSERT_EQ(o->num_tiles(), 6);
  const PermutationGroup s4(4, {{{1, 0, 2, 3}, -1}, {{1, 2, 3, 0}, -1}});
  ASSERT_EQ(s4.order(), 24u);
  const BlockShape s({o, o, o, o}, s4, {0, 0, 0, 0});
  int located = 0;
  std::array<tile_t, 4> t{};
  for (t[0] = 0; t[0] < o->num_tiles(); ++t[0])
    for (t[1] = 0; t[1] < o->num_tiles(); ++t[1])
      for (t[2] = 0; t[2] < o->num_tiles(); ++t[2])
        for (t[3] = 0; t[3] < o->num_tiles(); ++t[3]) {
          if (std::set<tile_t>(t.begin(), t.end()).size() < 4 || !s.allowed(t.data())) continue;
          const BlockRef ref = *s.locate(t.data());
          std::array<tile_t, 4> sorted = t;
          std::sort(sorted.begin(), sorted.end());
          int inversions = 0;
          for (int j = 0; j < 4; ++j) {
            EXPECT_EQ(s.block_tiles(ref.slot)[j], sorted[static_cast<std::size_t>(j)]);
            EXPECT_EQ(t[static_cast<std::size_t>(j)],
                      s.block_tiles(ref.slot)[ref.axes[static_cast<std::size_t>(j)]]);
            for (int k = j + 1; k < 4; ++k)
              inversions += t[static_cast<std::size_t>(j)] > t[static_cast<std::size_t>(k)];
          }
          EXPECT_EQ(ref.sign, inversions % 2 == 0 ? 1 : -1);
          ++located;
        }
  EXPECT_EQ(located, 24 * 15);  // the orderings of the 15 sets of four of the six tiles
}

TEST(BlockShape, RefusesGeneratorsAcrossSpacesOrSides) {
  std::mt19937 rng(1);
  auto o = random_space(rng, 2, true, 1, 2);
  auto v = random_space(rng, 3, true, 1, 2);
  EXPECT_THROW(BlockShape({o, v}, PermutationGroup(2, {{{1, 0}, -1}})), InputError);
  EXPECT_THROW(BlockShape({o, o, o, o}, PermutationGroup(4, {{{0, 2, 1, 3}, 1}})), InputError);
  EXPECT_THROW(BlockShape({o, o}, PermutationGroup(2), {1}), InputError);
}

TEST(BlockShape, RefusesBlocksBeyondMemory) {
  // 4 indices of 200 one-orbital tiles of one irrep, no symmetry: 1.6e9 blocks, whose index
  // alone would take about 150 GiB. Refused before any is enumerated.
  auto v = std::make_shared<IndexSpace>(std::vector<Orbital>(200), 1, "v");
  try {
    BlockShape({v, v, v, v}, PermutationGroup(4));
    FAIL() << "1.6e9 blocks were accepted";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("[v, v, v, v] has about 1600000000 canonical non-zero blocks"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("use larger tiles"), std::string::npos) << what;
  }
  // A dense index is refused for the grid itself.
  EXPECT_THROW(BlockShape({v, v, v, v}, PermutationGroup(4), {}, 0, BlockShape::Index::dense),
               InputError);
}

TEST(BlockShape, RefusesMoreBlocksThanItsBlockIndexNumbers) {
  // S4 on four indices of one tile fixes every tuple, so each of the 8193^2 (< 2^27) tuples over
  // the other two indices is a block of its own: more than the 2^26 slots that the 31 bits of an
  // entry leave beside the 5 its 24 elements take.
  auto one = std::make_shared<IndexSpace>(std::vector<Orbital>(1), 1, "s");
  auto v = std::make_shared<IndexSpace>(std::vector<Orbital>(8193), 1, "v");
  const PermutationGroup s4(6, {{{1, 0, 2, 3, 4, 5}, 1}, {{1, 2, 3, 0, 4, 5}, 1}});
  ASSERT_EQ(s4.order(), 24u);
  try {
    BlockShape({one, one, one, one, v, v}, s4, {0, 0, 0, 0, 0, 0});
    FAIL() << "67125249 blocks with 24 elements were accepted";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("[s, s, s, s, v, v] may have 67125249 distinct blocks under its symmetry "
                        "group of order 24"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("use larger tiles"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace tilecc
