#pragma once
// What both (T) kernels do with their input tensors: check their spaces, read them whole or one
// tile of their first index at a time, through the store.
#include <vector>

#include "tilecc/box.hpp"
#include "tilecc/error.hpp"
#include "tilecc/mpi_store.hpp"
#include "tilecc/node_shared.hpp"
#include "tilecc/node_slices.hpp"

namespace tilecc::kernels::detail {

/** Refuses a tensor whose spaces are not `expected` (the occupied and virtual spaces of t1). */
inline void check_spaces(const BlockTensor* t, const char* name,
                         std::initializer_list<const IndexSpace*> expected) {
  TILECC_CHECK(t != nullptr, "(T): the input ", name, " is missing.");
  const BlockShape& shape = t->shape();
  TILECC_CHECK(shape.rank() == static_cast<int>(expected.size()), "(T): ", name, " has rank ",
               shape.rank(), ", expected ", expected.size(), ".");
  int k = 0;
  for (const IndexSpace* space : expected)
    TILECC_CHECK(shape.space(k++) == *space, "(T): index ", k - 1, " of ", name, " is over ",
                 shape.space(k - 1).describe(), ", expected t1's ", space->describe(), ".");
}

/** Offset and size of each irrep's range of a closed-shell kernel's space; refuses orbitals that
 *  are not spatial orbitals sorted by irrep. */
inline void irrep_ranges(const IndexSpace& space, std::array<extent_t, 8>& off,
                         std::array<extent_t, 8>& size) {
  int last = 0;
  for (const Orbital& orbital : space.orbitals()) {
    TILECC_CHECK(orbital.spin == Spin::none && orbital.irrep >= last,
                 "closed-shell (T): the orbitals of ", space.describe(),
                 " must be spatial orbitals sorted by irrep.");
    last = orbital.irrep;
    ++size[static_cast<std::size_t>(orbital.irrep)];
  }
  for (std::size_t g = 1; g < 8; ++g) off[g] = off[g - 1] + size[g - 1];
}

/** Space k of t1 (0: occupied, 1: virtual), the spaces every (T) kernel is over. */
inline const IndexSpace& t1_space(const BlockTensor* t1, int k) {
  TILECC_CHECK(t1 != nullptr && t1->rank() == 2, "(T): t1 is missing or not of rank 2.");
  return t1->shape().space(k);
}

/** The communicator of a tensor's ranks; null for a tensor of one process. */
inline std::shared_ptr<Communicator> communicator_of(const BlockTensor& t) {
  const auto* distributed = dynamic_cast<const MpiStore*>(&t.store());
  return distributed != nullptr ? distributed->communicator_ptr() : nullptr;
}

/** Refuses energy() on a kernel made from its spaces alone. */
inline void check_inputs(bool has_inputs, const char* kernel) {
  TILECC_CHECK(has_inputs, "(T): this ", kernel,
               " kernel was made from its spaces only: it describes the work but has no "
               "amplitudes or integrals to compute energies from.");
}

inline std::vector<double> energies(const IndexSpace& space) {
  std::vector<double> e;
  for (const Orbital& orbital : space.orbitals()) e.push_back(orbital.energy);
  return e;
}

/** body(p0, np, slab) for each tile of the first index: its first orbital, its orbitals, and the
 *  tensor's dense slab over them ([np][...] row-major), read through the store. Only the tiles
 *  holding an orbital p with wanted(p), when given: what a node holds of slices spread over the
 *  nodes. */
template <class Body, class Wanted>
void for_each_first_tile(const BlockTensor& t, Body&& body, Wanted&& wanted) {
  const BlockShape& shape = t.shape();
  std::vector<double> slab;
  for (tile_t p = 0; p < shape.space(0).num_tiles(); ++p) {
    const Tile& tile = shape.space(0).tile(p);
    bool any = false;
    for (extent_t q = tile.offset; q < tile.offset + tile.extent; ++q) any = any || wanted(q);
    if (!any) continue;
    TileBox box = whole(shape);
    box.first[0] = p, box.last[0] = p + 1;
    extent_t size = 1;
    for (int k = 0; k < shape.rank(); ++k) size *= box_extent(shape, box, k);
    slab.resize(static_cast<std::size_t>(size));
    read_box(t, box, slab.data());
    body(tile.offset, tile.extent, slab.data());
  }
}

template <class Body>
void for_each_first_tile(const BlockTensor& t, Body&& body) {
  for_each_first_tile(t, body, [](extent_t) { return true; });
}

/** The slices of `dst` this node holds, slice p the tensor's dense [p][...] row, read tile by tile
 *  of its first index (by the node's first rank). */
inline void read_slices(const BlockTensor& t, NodeSlices& dst) {
  const auto held = [&](extent_t p) { return dst.held(static_cast<std::size_t>(p)); };
  for_each_first_tile(
      t,
      [&](extent_t p0, extent_t np, const double* slab) {
        for (extent_t p = p0; p < p0 + np; ++p) {
          const auto s = static_cast<std::size_t>(p);
          if (held(p))
            std::copy_n(slab + (p - p0) * dst.slice_size(s), dst.slice_size(s), dst.writable(s));
        }
      },
      held);
}

}  // namespace tilecc::kernels::detail
