// IndexSpace: ordering, tiling and its errors.
#include <gtest/gtest.h>

#include "tilecc/error.hpp"
#include "tilecc/space.hpp"

namespace tilecc {
namespace {

TEST(IndexSpace, SortsBySpinThenIrrepThenEnergy) {
  IndexSpace s(
      {{Spin::beta, 0, 1.0}, {Spin::alpha, 1, 0.5}, {Spin::alpha, 0, 2.0}, {Spin::alpha, 0, -1.0}},
      4);
  ASSERT_EQ(s.size(), 4);
  EXPECT_EQ(s.order(), (std::vector<extent_t>{3, 2, 1, 0}));
  EXPECT_EQ(s.num_tiles(), 3);  // (alpha,0) (alpha,1) (beta,0)
  EXPECT_EQ(s.tile(0).extent, 2);
  EXPECT_EQ(s.tile(1).irrep, 1);
  EXPECT_EQ(s.tile(2).spin, Spin::beta);
}

TEST(IndexSpace, TilesAreBalancedAndNeverStraddleSegments) {
  std::vector<Orbital> orbs;
  for (int p = 0; p < 11; ++p) orbs.push_back({Spin::none, 0, 0.0});
  for (int p = 0; p < 3; ++p) orbs.push_back({Spin::none, 2, 0.0});
  IndexSpace s(orbs, 4);
  ASSERT_EQ(s.num_tiles(), 4);  // 11 -> 4+4+3, 3 -> 3
  EXPECT_EQ(s.tile(0).extent, 4);
  EXPECT_EQ(s.tile(2).extent, 3);
  EXPECT_EQ(s.tile(3).offset, 11);
  EXPECT_EQ(s.tile(3).irrep, 2);
}

TEST(IndexSpace, RefusesBadInput) {
  EXPECT_THROW(IndexSpace({{Spin::none, 0, 0.0}}, 0), InputError);
  EXPECT_THROW(IndexSpace({}, 4), InputError);
  EXPECT_THROW(IndexSpace({{Spin::none, 8, 0.0}}, 4), InputError);
  try {
    IndexSpace({{Spin::none, 0, 0.0}}, -2, "occ");
    FAIL() << "a negative tile size was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("index space 'occ': tile size must be a positive"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tilecc
