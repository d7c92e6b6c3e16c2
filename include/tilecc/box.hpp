#pragma once
/** @file Dense boxes of a block tensor, read through its store: what a kernel that works on
 * dense slices (the (T) kernels) uses instead of a whole dense copy of the tensor. */
#include <vector>

#include "tilecc/tensor.hpp"

namespace tilecc {

/** Whole tiles [first[k], last[k]) of each index of a tensor. */
struct TileBox {
  TileTuple first{}, last{};
};

/** Every tile of every index. */
TileBox whole(const BlockShape& shape);

/** Orbitals the box spans along index k. */
extent_t box_extent(const BlockShape& shape, const TileBox& box, int k);

/**
 * Writes the box as a dense row-major array over its orbitals (in the spaces' sorted order) into
 * out, which must hold the product of box_extent over the indices: every block in it is read
 * through the tensor's store (BlockStore::fetch, so each read is counted by class) and brought
 * from its canonical block through its BlockRef; blocks that are zero by symmetry are written as
 * zeros.
 *
 * @code
 *   TileBox box = whole(ovvv.shape());
 *   box.first[0] = p, box.last[0] = p + 1;            // one occupied tile: a slab of <pe||bc>
 *   std::vector<double> slab(...);
 *   read_box(ovvv, box, slab.data());
 * @endcode
 */
void read_box(const BlockTensor& t, const TileBox& box, double* out);

/** The whole tensor as a dense array (read_box over every tile). */
std::vector<double> read_dense(const BlockTensor& t);

}  // namespace tilecc
