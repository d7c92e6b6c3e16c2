#pragma once
/** @file Block-wise tensor operations other than contraction. Each works on canonical blocks only
 * and keeps every block's symmetry. */
#include <cstdint>
#include <vector>

#include "tilecc/exec.hpp"
#include "tilecc/plan.hpp"
#include "tilecc/tensor.hpp"

namespace tilecc {

/** T *= alpha. */
void scale(BlockTensor& t, double alpha);

/**
 * C[lc] = beta * C[lc] + alpha * A[la], where la is a permutation of lc:
 * `C["ijab"] = A["ijab"] - A["jiab"]` is two calls. Only C's canonical blocks are computed; the
 * caller (the expression layer) checks that the sum respects C's symmetry. C must not be A.
 */
void add(const Operand& c_labels, BlockTensor& c, const Operand& a_labels, const BlockTensor& a,
         double alpha, double beta, Executor& executor);

/** The canonical element of every orbit set to `value` and the others to sign * value, so that
 * the tensor keeps its symmetry; elements an antisymmetry forces to zero (t_iiab) stay 0. */
void fill(BlockTensor& t, double value);

/** Uniform random elements in [-1, 1), reproducible from `seed`, with exact symmetry. */
void fill_random(BlockTensor& t, std::uint64_t seed);

/** Project every block mapped to itself by a symmetry (a diagonal block) onto that symmetry:
 * X <- mean over the stabiliser of sign * g(X). */
void symmetrize(BlockTensor& t);

/**
 * T[x] /= shift + sum_k signs[k] * e_k[x_k], with e_k the orbital energies of index k's space:
 * signs (+1, +1, -1, -1) on t_ijab give the CC denominator e_i + e_j - e_a - e_b.
 * A zero denominator is an error that names the block.
 */
void divide_by_denominators(BlockTensor& t, const std::vector<int>& signs, double shift = 0.0);

/** The stored elements (canonical blocks, in slot order, no padding) into `out`, which holds
 *  shape().stored_elements() doubles: the tensor as a vector, for DIIS and checkpoints. */
void pack(const BlockTensor& t, double* out);

/** The inverse of pack(). */
void unpack(BlockTensor& t, const double* in);

/**
 * dst <- src, for two tensors over the same orbitals (spins, irreps, order) with the same symmetry
 * and sparsity but other tilings: each canonical block of dst is gathered from the blocks of src
 * that overlap it, each read through its canonical block (block = sign * stored.transpose(axes)).
 *
 * Checkpoints use it to store a tensor tile-independently, in one block per spin and irrep
 * segment of each index, and to read it back at any tile size.
 *
 * @code
 *   copy_retiled(t2, t2_by_segment);   // t2 tiled by 16 -> tiled by whole segments
 * @endcode
 */
void copy_retiled(const BlockTensor& src, BlockTensor& dst);

/** Copy the canonical blocks out of a dense row-major array over the spaces' sorted orbitals. */
void from_dense(BlockTensor& t, const double* dense);

/** Write every non-zero block (canonical ones and their symmetric images) into a dense, zeroed,
 * row-major array over the spaces' sorted orbitals. */
void to_dense(const BlockTensor& t, double* dense);

}  // namespace tilecc
