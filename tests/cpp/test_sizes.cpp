// Sizes that do not fit their types are refused in one sentence, never wrapped: a tensor of 2^64
// elements, 2^64 tile tuples, storage of 2^64 bytes, tile sizes near 2^63, GEMM extents beyond
// the BLAS's 32-bit integers. Run under AddressSanitizer and UndefinedBehaviorSanitizer by
// `make test`, where a wrapped size would be a heap overflow rather than a wrong number.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "tilecc/blas.hpp"
#include "tilecc/error.hpp"
#include "tilecc/shape.hpp"
#include "tilecc/space.hpp"
#include "tilecc/tensor.hpp"

namespace tilecc {
namespace {

SpacePtr spatial(extent_t orbitals, extent_t tile) {
  return std::make_shared<IndexSpace>(
      std::vector<Orbital>(static_cast<std::size_t>(orbitals), Orbital{}), tile);
}

std::string refusal(const std::function<void()>& make) {
  try {
    make();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Sizes, TileSizesNearTheLimitMakeOneTile) {
  const IndexSpace s(std::vector<Orbital>(10, Orbital{}), std::numeric_limits<extent_t>::max());
  EXPECT_EQ(s.num_tiles(), 1);
  EXPECT_EQ(s.tile(0).extent, 10);
}

TEST(Sizes, ABlockOfTwoToTheSixtyFourElementsIsRefused) {
  const SpacePtr big = spatial(1 << 16, std::numeric_limits<extent_t>::max());
  const std::string message = refusal(
      [&] { BlockShape shape({big, big, big, big}, PermutationGroup(4), {0, 0, 0, 0}, 0); });
  EXPECT_NE(message.find("a block's elements"), std::string::npos) << message;
  EXPECT_NE(message.find("too large to represent"), std::string::npos) << message;
}

TEST(Sizes, StorageOfTwoToTheSixtyFourBytesIsRefusedBeforeAllocating) {
  // 2^15 * 2^15 * 2^15 * 2^16 = 2^61 elements fit an extent_t; their 2^64 bytes do not.
  const SpacePtr a = spatial(1 << 15, std::numeric_limits<extent_t>::max());
  const SpacePtr b = spatial(1 << 16, std::numeric_limits<extent_t>::max());
  auto shape = std::make_shared<BlockShape>(std::vector<SpacePtr>{a, a, a, b}, PermutationGroup(4),
                                            std::vector<int>{0, 0, 0, 0}, 0);
  EXPECT_EQ(shape->dense_elements(), extent_t{1} << 61);
  const std::string message = refusal([&] { BlockTensor t(shape); });
  EXPECT_NE(message.find("storage in bytes"), std::string::npos) << message;
}

TEST(Sizes, TwoToTheSixtyFourTileTuplesAreRefused) {
  const SpacePtr many = spatial(1 << 16, 1);  // 2^16 tiles
  const std::string message = refusal(
      [&] { BlockShape shape({many, many, many, many}, PermutationGroup(4), {0, 0, 0, 0}, 0); });
  EXPECT_NE(message.find("tile tuples"), std::string::npos) << message;
}

TEST(Sizes, GemmExtentsBeyondTheBlasIntegersAreRefused) {
  const extent_t too_big = extent_t{1} << 31;
  double x = 0.0;
  const std::string message =
      refusal([&] { blas::gemm(false, false, too_big, 1, 1, 1.0, &x, 1, &x, 1, 0.0, &x, 1); });
  EXPECT_NE(message.find("a GEMM's m 2147483648 does not fit"), std::string::npos) << message;
}

}  // namespace
}  // namespace tilecc
