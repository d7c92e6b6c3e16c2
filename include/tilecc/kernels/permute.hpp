#pragma once
/** @file Block permutation kernels (the SORT4 family of NWChem's TCE), and their reference twin.
 *
 * Kernel contract (see also AGENTS.md):
 *  - Update:  dst = beta * dst + alpha * transpose(src, axes), where axis j of dst is axis axes[j]
 *    of src. Both arrays are dense and row-major; dst's extents are src_extents[axes[j]].
 *  - rank 0..max_rank; extents may be 1; an extent of 0 makes the call a no-op.
 *  - src and dst must not overlap. No alignment is assumed.
 *  - Thread safety: none needed; the kernel touches only its arguments.
 *  - beta == 0 overwrites dst without reading it (NaNs in dst are not propagated).
 */
#include "tilecc/types.hpp"

namespace tilecc::kernels {

/** The fast kernel: fuses axes that stay adjacent, copies contiguous runs when the innermost
 * axis is unchanged, and otherwise transposes in cache-sized 2-D tiles. */
void permute(int rank, const extent_t* src_extents, const Axes& axes, double alpha,
             const double* src, double beta, double* dst);

/** Row-major strides of a dense block with these extents (strides[k] for axis k); returns the
 *  block's number of elements. */
extent_t dense_strides(int rank, const extent_t* extents, extent_t* strides);

/** The fast kernel between views: src_strides[k] elements separate neighbours along source axis
 *  k, dst_strides[j] along destination axis j (a sub-block keeps its block's strides), so that a
 *  slab of a block can be permuted out of it or into it. */
void permute_strided(int rank, const extent_t* src_extents, const extent_t* src_strides,
                     const Axes& axes, double alpha, const double* src, double beta, double* dst,
                     const extent_t* dst_strides);

/** The loops the fast kernel runs for a permutation, which its time follows (the cost model
 *  prices permutations by them). */
struct PermuteLoops {
  extent_t elements = 0;
  /// Axes left after fusing: 0 or 1 makes the permutation a plain copy.
  int fused_rank = 0;
  /// The innermost destination axis is contiguous in the source: contiguous runs are copied.
  bool runs = true;
  /// Innermost loops the kernel enters: one per run, or one per row of each transposed tile.
  extent_t inner_loops = 0;
  /// Source axes fused into the innermost destination axis (bit k: axis k; extent-1 axes left
  /// out). With the extent-1 axes they fix the fused layout of every block of this rank and axes.
  unsigned inner_axes = 0;
};
PermuteLoops permute_loops(int rank, const extent_t* src_extents, const Axes& axes);

/** Side of the squares the kernel transposes in (16 x 16 doubles: both fit in L1). */
inline constexpr extent_t transpose_tile = 16;

/** PermuteLoops::inner_loops of a permutation whose fused axes hold `outer` elements outside the
 *  innermost one and `inner` in it: a loop over each run, or over each row of every square. */
constexpr extent_t inner_loops(bool runs, extent_t outer, extent_t inner) {
  return runs ? outer : outer * ((inner + transpose_tile - 1) / transpose_tile);
}

/** The plain, obviously correct twin: one loop over every element. */
void permute_reference(int rank, const extent_t* src_extents, const Axes& axes, double alpha,
                       const double* src, double beta, double* dst);

/** Name of the kernel set compiled in, for `tilecc info`. */
const char* permute_kernel_name();

}  // namespace tilecc::kernels
