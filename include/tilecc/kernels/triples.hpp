#pragma once
/** @file The closed-shell (T) energy, one occupied triple (i, j, k) at a time, fused and with
 * point-group symmetry.
 *
 * Kernel contract:
 *  - energy(i, j, k) is sum_abc W_abc r3(X)_abc / D_abc where, with S the sum over the six
 *    simultaneous orderings of (i,j,k) and (a,b,c),
 *      W = S[ sum_f (ia|fb) t_kj^cf - sum_m (ia|mj) t_mk^bc ],
 *      X = W + S[ (ia|jb) t_kc + f_kc t_ij^ab ] / 2,
 *      r3(X)_ijk = 4 X_ijk + X_jki + X_kij - 2 X_kji - 2 X_ikj - 2 X_jik (as (a,b,c) transposes),
 *      D = e_i + e_j + e_k - e_a - e_b - e_c.
 *    The (T) energy is 2/6 of the sum of this over all (i, j, k).
 *  - Symmetry: orbitals carry D2h-subgroup irreps (0-7, products by XOR) and arrive sorted by
 *    irrep, so each irrep is a contiguous range. For a triple whose irreps multiply to G, W, X and
 *    the per-ordering parts are non-zero only where irrep(a) ^ irrep(b) ^ irrep(c) = G, and are
 *    stored packed: blocks (ga, gb) (gc = G ^ ga ^ gb), grouped by gab = ga ^ gb, each block
 *    [a][b][c] row-major. The GEMMs run over non-zero blocks only (about 1/|group| of the dense
 *    flops) and the element passes touch only stored elements. Without symmetry there is one
 *    block and the kernel is the dense one.
 *  - The constructor copies and repacks what it needs; the inputs may be freed afterwards.
 *    energy() is const and writes only its scratch, so workers may call it concurrently.
 */
#include <array>
#include <vector>

#include "tilecc/types.hpp"

namespace tilecc::kernels {

/** Dense, row-major inputs, every orbital index in irrep-sorted order. */
struct ClosedShellTriplesInputs {
  extent_t no = 0, nv = 0;
  const double* ovvv = nullptr;  ///< (ia|fb) as [i][a][f][b]
  const double* ovoo = nullptr;  ///< (ia|jk) as [i][a][j][k]
  const double* ovov = nullptr;  ///< (ia|jb) as [i][a][j][b]
  const double* t2 = nullptr;    ///< t_ij^ab as [i][j][a][b]
  const double* t1 = nullptr;    ///< [i][a]
  const double* fov = nullptr;   ///< [i][a]
  const double* eo = nullptr;    ///< [no]
  const double* ev = nullptr;    ///< [nv]
  const int* occ_irreps = nullptr;
  const int* vir_irreps = nullptr;
};

class ClosedShellTriples {
 public:
  static constexpr int irreps = 8;

  explicit ClosedShellTriples(const ClosedShellTriplesInputs& in);

  extent_t occupied() const { return no_; }
  /** Doubles of scratch one energy() call needs. */
  extent_t scratch_doubles() const;
  /** Stored elements of W for this triple: its work, up to a constant. */
  extent_t elements(extent_t i, extent_t j, extent_t k) const;
  double energy(extent_t i, extent_t j, extent_t k, double* scratch) const;

 private:
  using Table = std::array<std::array<extent_t, irreps>, irreps>;
  /** Where the element (a, b, c) of one target block sits in a source array of the same
   * symmetry: base + a * sa + b * sb + c * sc (local indices within the blocks). */
  struct View {
    extent_t base, sa, sb, sc;
  };

  /** One term of a permuted sum: weight * src with its axes permuted (target axis t is the
   * source's axis axes[t]). */
  struct Term {
    const double* src;
    std::array<int, 3> axes;
    double weight;
  };

  View view(int g, const std::array<int, 3>& axes, const std::array<int, 3>& block) const;
  /** dst = sum of the terms, over the packed blocks of symmetry g. */
  template <std::size_t N>
  void permuted_sum(int g, double* dst, const std::array<Term, N>& terms) const;
  /** The connected part of one ordering (p, q, r) in its own axes, into w0 (overwritten). */
  void connected(int g, extent_t p, extent_t q, extent_t r, double* w0) const;
  /** x = w + V/2, V the disconnected triples of the triple occ. */
  void add_disconnected(int g, const std::array<extent_t, 3>& occ, const double* w,
                        double* x) const;
  template <class Body>
  void for_each_block(int g, Body&& body) const;

  extent_t no_, nv_;
  std::vector<int> occ_irrep_;
  std::array<extent_t, irreps> occ_off_{}, occ_n_{}, vir_off_{}, vir_n_{};
  // Packed layout of a W of symmetry g: block (ga, gb) at block_off_[g][ga][gb], group gab at
  // group_off_[g][gab]; row_off_[gab][ga] is block ga's first (a, b) row within its group.
  std::array<Table, irreps> block_off_{};
  Table group_off_{};
  Table row_off_{};
  std::array<extent_t, irreps> group_rows_{}, size_{};
  // (pa|fb) per p, packed as one [(a, b) rows of group gab][f] matrix per gab.
  std::vector<double> x_;
  std::vector<std::array<extent_t, irreps>> x_off_;  // [p][gab]
  // t_mr^bc per r, packed as one [m][b][c] matrix per (gb, gc).
  std::vector<double> tm_;
  std::vector<Table> tm_off_;  // [r][gb][gc]
  std::vector<double> iajm_;   // (ia|mj) as [i][a][j][m]
  std::vector<double> t2_, t1_, fov_, ovov_, eo_, ev_;
};

}  // namespace tilecc::kernels
