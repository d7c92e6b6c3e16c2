#pragma once
/** @file IndexSpace: orbitals with spin and irrep labels, ordered and split into tiles. */
#include <string>
#include <vector>

#include "tilecc/types.hpp"

namespace tilecc {

/** Spin of an orbital, as twice its s_z: alpha = +1, beta = -1, none = 0 (spatial orbitals). */
enum class Spin : std::int8_t { beta = -1, none = 0, alpha = 1 };

/** What a space is for; the expression layer checks labels against it (i..o occupied, a..h
 * virtual). */
enum class SpaceKind : std::int8_t { general = 0, occupied = 1, virtual_ = 2 };

/** One orbital: its spin, its irrep (0..7, a D2h-subgroup irrep numbered as PySCF numbers them, so
 * that the product of two irreps is their XOR) and its energy. */
struct Orbital {
  Spin spin = Spin::none;
  int irrep = 0;
  double energy = 0.0;
};

/** A contiguous run of orbitals of one spin and one irrep. */
struct Tile {
  extent_t offset = 0;  ///< first orbital (in the space's sorted order)
  extent_t extent = 0;  ///< number of orbitals
  Spin spin = Spin::none;
  int irrep = 0;
};

/**
 * An index space: a list of orbitals, sorted by spin (alpha, then beta, then spatial), then irrep,
 * then energy, and cut into tiles of about `tile_size` orbitals.
 *
 * A tile never straddles a spin or irrep boundary, so each tile has one spin and one irrep and
 * block sparsity can be decided per block. A segment of n orbitals of one (spin, irrep) is cut
 * into ceil(n / tile_size) tiles of near-equal size (they differ by at most one orbital), which
 * keeps tasks of one contraction similar in cost.
 *
 * @code
 *   std::vector<Orbital> orbs = {{Spin::alpha, 0, -1.0}, {Spin::alpha, 1, -0.5}, {Spin::beta, 0,
 * -1.0}}; IndexSpace occ(orbs, 16, "o", SpaceKind::occupied);   // 3 tiles: (alpha,0) (alpha,1)
 * (beta,0)
 * @endcode
 */
class IndexSpace {
 public:
  IndexSpace(std::vector<Orbital> orbitals, extent_t tile_size, std::string name = "",
             SpaceKind kind = SpaceKind::general);

  extent_t size() const { return static_cast<extent_t>(orbitals_.size()); }
  tile_t num_tiles() const { return static_cast<tile_t>(tiles_.size()); }
  const Tile& tile(tile_t t) const { return tiles_[static_cast<std::size_t>(t)]; }
  const std::vector<Tile>& tiles() const { return tiles_; }
  extent_t tile_size() const { return tile_size_; }
  const std::string& name() const { return name_; }
  SpaceKind kind() const { return kind_; }

  /** The orbitals in sorted order. */
  const std::vector<Orbital>& orbitals() const { return orbitals_; }
  /** order()[p] is the position in the caller's list of the orbital at sorted position p. */
  const std::vector<extent_t>& order() const { return order_; }

  /** Same orbitals (spin, irrep, energy) in the same order and the same tiling. */
  bool operator==(const IndexSpace& other) const;

  /** "name (n orbitals, t tiles)" for error messages. */
  std::string describe() const;

 private:
  std::vector<Orbital> orbitals_;
  std::vector<extent_t> order_;
  std::vector<Tile> tiles_;
  extent_t tile_size_;
  std::string name_;
  SpaceKind kind_;
};

}  // namespace tilecc
