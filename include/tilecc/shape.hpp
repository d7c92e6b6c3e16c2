#pragma once
/** @file BlockShape: which blocks of a tensor are non-zero, and which of them are stored. */
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tilecc/space.hpp"
#include "tilecc/symmetry.hpp"

namespace tilecc {

using SpacePtr = std::shared_ptr<const IndexSpace>;

/** Where to find one block of a tensor: block = sign * stored(slot).transpose(axes), i.e. axis j
 * of the block is axis axes[j] of the stored canonical block. */
struct BlockRef {
  slot_t slot = -1;
  Axes axes{};
  int sign = 1;
};

/**
 * The block structure of a tensor: its index spaces, its permutational symmetry group, and the
 * list of canonical non-zero blocks that are stored.
 *
 * A block (t_0, ..., t_{n-1}) (one tile per index) can be non-zero only if
 *  - spin is conserved:  sum_k side_k * sz(t_k) == 0, where side_k = +1 for a bra (upper, creation)
 *    index, -1 for a ket index, 0 for an index without spin bookkeeping; by default the first half
 *    of the indices of an even-rank tensor are bra and the second half ket (t_ij^ab, <pq||rs>);
 *    chemists' notation (pq|rs) is sides (+1, -1, +1, -1);
 *  - the point group allows it: irrep(t_0) XOR ... XOR irrep(t_{n-1}) == target irrep (0, the
 *    totally symmetric irrep, for every tensor of a closed-shell or high-spin energy calculation).
 * Of each orbit of non-zero blocks under the permutation group, only the lexicographically
 * smallest tile tuple is stored (its canonical block); a block mapped to itself by a non-trivial
 * element (a "diagonal" block such as tile(i) == tile(j) of an antisymmetric pair) is stored whole,
 * and its elements obey that element's symmetry.
 *
 * @code
 *   auto o = std::make_shared<IndexSpace>(occ_orbitals, 8, "o", SpaceKind::occupied);
 *   auto v = std::make_shared<IndexSpace>(vir_orbitals, 8, "v", SpaceKind::virtual_);
 *   BlockShape t2({o, o, v, v}, PermutationGroup(4, {{{1,0,2,3}, -1}, {{0,1,3,2}, -1}}));
 *   t2.num_blocks();   // canonical non-zero blocks only
 * @endcode
 */
class BlockShape {
 public:
  /** How a shape finds a tile tuple's block. `dense`: a table over the whole tile grid, 4 bytes a
   *  tuple, a lookup a load (up to max_tile_tuples tuples). `sparse`: a hash of the canonical
   *  blocks only, a tuple found through the smallest image of its orbit, so that a tensor whose
   *  blocks fit in memory is never refused for the size of its grid. `automatic` takes the table
   *  where it fits. */
  enum class Index : std::uint8_t { automatic, dense, sparse };

  BlockShape(std::vector<SpacePtr> spaces, PermutationGroup group, std::vector<int> spin_sides = {},
             int irrep = 0, Index index = Index::automatic);

  int rank() const { return static_cast<int>(spaces_.size()); }
  const IndexSpace& space(int k) const { return *spaces_[static_cast<std::size_t>(k)]; }
  const SpacePtr& space_ptr(int k) const { return spaces_[static_cast<std::size_t>(k)]; }
  const std::vector<SpacePtr>& spaces() const { return spaces_; }
  const PermutationGroup& group() const { return group_; }
  const std::vector<int>& spin_sides() const { return spin_sides_; }
  int irrep() const { return irrep_; }

  /** True when spin and point-group symmetry allow the block. */
  bool allowed(const tile_t* tiles) const;
  /** Where to read the block with these tiles, or nothing when the block is zero. */
  std::optional<BlockRef> locate(const tile_t* tiles) const {
    const StoredAt at = block_index()[block_id(tiles)];
    if (at.slot < 0) return std::nullopt;
    return BlockRef{at.slot, element_axes(at.element), element_sign(at.element)};
  }
  /** Where a block is stored, by the index of its tuple in the tile grid, block_id(tiles) =
   *  sum_k tiles[k] * grid_stride(k): the inspector updates that index as it walks the grid and
   *  needs the slot and element only (the element's axes and sign are per element). */
  struct StoredAt {
    slot_t slot = -1;  ///< -1: the block is zero
    int element = 0;
  };
  /** The block index, StoredAt by block_id, as a value: a loop that locates many blocks keeps it
   *  in registers, where the stores the loop makes cannot be taken to change it. */
  class BlockIndex {
   public:
    StoredAt operator[](block_id_t id) const {
      if (entries_ == nullptr) return sparse_->find_sparse(id);
      const std::int32_t entry = entries_[id];
      if (entry < 0) return {};
      return {entry >> element_bits_, static_cast<int>(entry & element_mask_)};
    }

   private:
    friend class BlockShape;
    BlockIndex(const std::int32_t* entries, int element_bits, std::int32_t element_mask,
               const BlockShape* sparse)
        : entries_(entries),
          element_bits_(element_bits),
          element_mask_(element_mask),
          sparse_(sparse) {}
    const std::int32_t* entries_;  // nullptr: a sparse index, asked through sparse_
    int element_bits_;
    std::int32_t element_mask_;
    const BlockShape* sparse_;
  };
  BlockIndex block_index() const {
    return {sparse_index() ? nullptr : locator_.data(), element_bits_, element_mask_, this};
  }
  /** Whether blocks are found through a hash of the canonical ones (see Index). */
  bool sparse_index() const { return sparse_index_; }
  /** BlockRef::axes of the blocks that group element `e` maps to their stored blocks (e^-1). */
  const Axes& element_axes(int e) const { return element_axes_[static_cast<std::size_t>(e)]; }
  int element_sign(int e) const { return group_.elements()[static_cast<std::size_t>(e)].sign; }
  block_id_t block_id(const tile_t* tiles) const {
    block_id_t id = 0;
    for (int k = 0; k < rank(); ++k)
      id += static_cast<block_id_t>(tiles[k]) * strides_[static_cast<std::size_t>(k)];
    return id;
  }
  block_id_t grid_stride(int k) const { return strides_[static_cast<std::size_t>(k)]; }
  /** True when `tiles` is the smallest tuple of its orbit. */
  bool is_canonical(const tile_t* tiles) const;

  /** Most tile tuples a tensor may have: its block index takes 4 bytes per tuple. */
  static constexpr block_id_t max_tile_tuples = block_id_t{1} << 27;

  slot_t num_blocks() const { return static_cast<slot_t>(sizes_.size()); }
  const tile_t* block_tiles(slot_t s) const {
    return &tiles_[static_cast<std::size_t>(s * rank())];
  }
  extent_t block_size(slot_t s) const { return sizes_[static_cast<std::size_t>(s)]; }
  /** Extents of stored block s, one per index (rank of them). */
  const extent_t* block_extents(slot_t s) const { return extents_.data() + s * rank(); }
  extent_t block_extent(slot_t s, int k) const { return block_extents(s)[k]; }
  /** Bit k set: stored block s has more than one index on axis k (with block_size(s), what
   *  PermutePricer prices a block by). */
  unsigned block_long_axes(slot_t s) const { return long_axes_[static_cast<std::size_t>(s)]; }
  /** block_size and block_long_axes of every stored block, by slot: a pricer goes over them all
   *  at once (PermutePricer::price_blocks). */
  const extent_t* all_block_sizes() const { return sizes_.data(); }
  const std::uint8_t* all_block_long_axes() const { return long_axes_.data(); }
  /** Number of distinct blocks in the orbit of stored block s (|G| / |stabiliser|). */
  int orbit_size(slot_t s) const { return orbit_sizes_[static_cast<std::size_t>(s)]; }

  /** Elements held by the store (blocks padded to 64-byte alignment are not counted). */
  extent_t stored_elements() const { return stored_elements_; }
  /** Elements of the dense tensor, prod of space sizes. */
  extent_t dense_elements() const;
  /** Elements in non-zero blocks, every orbit counted in full (what a code without permutational
   *  symmetry but with spin/point-group sparsity would store). */
  extent_t nonzero_elements() const { return nonzero_elements_; }

  /** Same spaces, group, sides and irrep. */
  bool operator==(const BlockShape& other) const;
  std::string describe() const;

 private:
  void enumerate_blocks(Index index);
  /** Adds t as a new stored block. */
  void add_canonical_block(const TileTuple& t, int stabiliser);
  /** The smallest image of t under the group, the first element giving it, and t's stabiliser. */
  void canonical_image(const TileTuple& t, TileTuple& best, std::size_t& element,
                       int& stabiliser) const;
  /** The sparse index's lookup: decode the tuple, find its orbit's canonical block. */
  StoredAt find_sparse(block_id_t id) const;
  /** Every canonical allowed tuple, visiting only allowed (spin, irrep) classes of tiles. */
  void enumerate_sparse();
  /** Whether a generator of the group maps t to a lexicographically smaller tuple (then t is not
   *  canonical). */
  bool smaller_under_a_generator(const TileTuple& t) const;
  /** Per index, its tiles' (spin, irrep) classes as [first, last) runs of tiles. */
  std::vector<std::vector<std::pair<tile_t, tile_t>>> tile_classes() const;
  /** Refuses, before enumerating, a tensor whose canonical blocks could not fit in memory. */
  void refuse_blocks_beyond_memory() const;
  std::string space_names() const;  // "[o, o, v, v]"

  std::vector<SpacePtr> spaces_;
  PermutationGroup group_;
  std::vector<int> spin_sides_;
  int irrep_;
  std::vector<block_id_t> strides_;
  std::vector<tile_t> tiles_;            // num_blocks x rank
  std::vector<extent_t> extents_;        // num_blocks x rank: the inspector prices blocks by them
  std::vector<extent_t> sizes_;          // num_blocks, in elements
  std::vector<std::uint8_t> long_axes_;  // num_blocks: block_long_axes (rank <= 8 bits)
  std::vector<int> orbit_sizes_;
  // Per tile tuple (by block_id): slot << element_bits_ | the element that maps the tuple to its
  // canonical block, or -1 for a zero block. The inspector locates every operand block of every
  // product; a table lookup keeps that to a few instructions. It costs 4 bytes per tile tuple,
  // and enumerate_blocks visits every tuple anyway. The inspector reads the tables of a plan's
  // operands after contractions have evicted them: at 8 bytes an entry, it waited for twice as
  // many cache lines.
  std::vector<std::int32_t> locator_;
  // The sparse index: canonical block_id -> slot (the group element is found at lookup).
  std::unordered_map<block_id_t, slot_t> sparse_;
  bool sparse_index_ = false;
  int element_bits_ = 0;            // bit_width(order - 1): enough for any element of group_
  std::int32_t element_mask_ = 0;   // (1 << element_bits_) - 1
  std::vector<Axes> element_axes_;  // per element g: the BlockRef axes g^-1
  extent_t stored_elements_ = 0;
  extent_t nonzero_elements_ = 0;
};

using ShapePtr = std::shared_ptr<const BlockShape>;

}  // namespace tilecc
