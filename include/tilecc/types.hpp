#pragma once
/** @file Named index types used throughout the core. */
#include <array>
#include <cstdint>

namespace tilecc {

using extent_t = std::int64_t;     ///< a number of orbitals or elements, an offset
using tile_t = std::int32_t;       ///< a tile's index within its index space
using slot_t = std::int64_t;       ///< a stored (canonical) block's index within a tensor
using block_id_t = std::uint64_t;  ///< a block's linear index in the tile grid of a tensor
using task_id_t = std::int64_t;    ///< a task's index within a plan

/** Tensors have at most this many indices (CCSDT needs 6; 8 leaves room). */
inline constexpr int max_rank = 8;

/** A tuple of tiles, one per tensor index; only the first `rank` entries are meaningful. */
using TileTuple = std::array<tile_t, max_rank>;

/** An axis permutation: entry j names the source axis that becomes axis j. */
using Axes = std::array<std::int8_t, max_rank>;

}  // namespace tilecc
