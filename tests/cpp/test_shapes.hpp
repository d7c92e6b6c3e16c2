#pragma once
// Spaces, shapes and dense copies the C++ tests build their tensors from.
#include <memory>
#include <vector>

#include "tilecc/ops.hpp"
#include "tilecc/shape.hpp"
#include "tilecc/tensor.hpp"

namespace tilecc::testing {

/** n spatial orbitals cut into tiles of `tile`, their irreps cycling through 0..irreps-1. */
inline SpacePtr space(int n, extent_t tile, int irreps) {
  std::vector<Orbital> orbs;
  for (int p = 0; p < n; ++p) orbs.push_back({Spin::none, p % irreps, 0.0});
  return std::make_shared<IndexSpace>(orbs, tile);
}

/** A shape over `spaces` with no permutational symmetry. */
inline ShapePtr shape(std::vector<SpacePtr> spaces) {
  const auto rank = static_cast<int>(spaces.size());
  return std::make_shared<BlockShape>(std::move(spaces), PermutationGroup(rank),
                                      std::vector<int>(static_cast<std::size_t>(rank), 0));
}

/** The tensor as a dense row-major array over its spaces' sorted orbitals. */
inline std::vector<double> dense(const BlockTensor& t) {
  std::vector<double> d(static_cast<std::size_t>(t.shape().dense_elements()), 0.0);
  to_dense(t, d.data());
  return d;
}

}  // namespace tilecc::testing
