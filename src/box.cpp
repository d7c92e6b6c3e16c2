#include "tilecc/box.hpp"

#include <algorithm>

#include "detail/checked.hpp"
#include "tilecc/error.hpp"
#include "tilecc/kernels/permute.hpp"
#include "tilecc/mem.hpp"

namespace tilecc {

TileBox whole(const BlockShape& shape) {
  TileBox box;
  for (int k = 0; k < shape.rank(); ++k) box.last[k] = shape.space(k).num_tiles();
  return box;
}

extent_t box_extent(const BlockShape& shape, const TileBox& box, int k) {
  const IndexSpace& space = shape.space(k);
  if (box.first[k] >= box.last[k]) return 0;
  const Tile& last = space.tile(box.last[k] - 1);
  return last.offset + last.extent - space.tile(box.first[k]).offset;
}

void read_box(const BlockTensor& t, const TileBox& box, double* out) {
  const BlockShape& shape = t.shape();
  const int rank = shape.rank();
  extent_t box_extents[max_rank], box_strides[max_rank];
  for (int k = 0; k < rank; ++k) {
    TILECC_CHECK(box.first[k] >= 0 && box.first[k] <= box.last[k] &&
                     box.last[k] <= shape.space(k).num_tiles(),
                 "read_box: tiles [", box.first[k], ", ", box.last[k], ") of index ", k,
                 " lie outside ", shape.space(k).describe(), ".");
    box_extents[k] = box_extent(shape, box, k);
  }
  const extent_t size = kernels::dense_strides(rank, box_extents, box_strides);
  std::fill_n(out, size, 0.0);
  if (size == 0) return;

  ScratchBuffer fetched, image;
  TileTuple tiles = box.first;
  for (;;) {
    if (const auto ref = shape.locate(tiles.data())) {
      const double* stored = t.store().fetch(ref->slot, fetched);
      const extent_t* stored_extents = shape.block_extents(ref->slot);
      extent_t extents[max_rank], origin = 0;
      for (int k = 0; k < rank; ++k) {
        extents[k] = stored_extents[ref->axes[static_cast<std::size_t>(k)]];
        origin += (shape.space(k).tile(tiles[static_cast<std::size_t>(k)]).offset -
                   shape.space(k).tile(box.first[static_cast<std::size_t>(k)]).offset) *
                  box_strides[k];
      }
      double* block = image.get(shape.block_size(ref->slot));
      kernels::permute(rank, stored_extents, ref->axes, ref->sign, stored, 0.0, block);
      // The block's rows (its last axis) into the box, along the box's strides.
      const extent_t row = extents[rank - 1], rows = shape.block_size(ref->slot) / row;
      extent_t index[max_rank] = {};
      for (extent_t r = 0; r < rows; ++r) {
        extent_t at = origin;
        for (int k = 0; k + 1 < rank; ++k) at += index[k] * box_strides[k];
        std::copy_n(block + r * row, row, out + at);
        for (int k = rank - 2; k >= 0 && ++index[k] == extents[k]; --k) index[k] = 0;
      }
    }
    int k = rank - 1;
    for (; k >= 0; --k) {
      const auto u = static_cast<std::size_t>(k);
      if (++tiles[u] < box.last[u]) break;
      tiles[u] = box.first[u];
    }
    if (k < 0) return;
  }
}

std::vector<double> read_dense(const BlockTensor& t) {
  const BlockShape& shape = t.shape();
  extent_t size = 1;
  for (int k = 0; k < shape.rank(); ++k)
    size = detail::checked_product(size, shape.space(k).size(), "a dense copy of the tensor");
  std::vector<double> dense(static_cast<std::size_t>(size));
  read_box(t, whole(shape), dense.data());
  return dense;
}

}  // namespace tilecc
