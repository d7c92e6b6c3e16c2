#pragma once
/** @file The closed-shell (T) energy, one occupied triple (i, j, k) at a time, fused and with
 * point-group symmetry (a TriplesKernel, see kernels/triples.hpp): step i, one task per pair
 * i <= j <= k. The inputs are shared with the virtual-triple loop
 * (kernels/closed_shell_virtual_triples.hpp), which suits large virtual spaces of low symmetry.
 *
 * Kernel contract:
 *  - A triple's summand is sum_abc W_abc r3(X)_abc / D_abc where, with S the sum over the six
 *    simultaneous orderings of (i,j,k) and (a,b,c),
 *      W = S[ sum_f (ia|fb) t_kj^cf - sum_m (ia|mj) t_mk^bc ],
 *      X = W + S[ (ia|jb) t_kc + f_kc t_ij^ab ] / 2,
 *      r3(X)_ijk = 4 X_ijk + X_jki + X_kij - 2 X_kji - 2 X_ikj - 2 X_jik (as (a,b,c) transposes),
 *      D = e_i + e_j + e_k - e_a - e_b - e_c.
 *    The (T) energy is 2/6 of the sum of this over all (i, j, k); the summand is symmetric.
 *  - Symmetry: orbitals carry D2h-subgroup irreps (0-7, products by XOR) and arrive sorted by
 *    irrep, so each irrep is a contiguous range. For a triple whose irreps multiply to G, W, X and
 *    the per-ordering parts are non-zero only where irrep(a) ^ irrep(b) ^ irrep(c) = G, and are
 *    stored packed: blocks (ga, gb) (gc = G ^ ga ^ gb), grouped by gab = ga ^ gb, each block
 *    [a][b][c] row-major. The GEMMs run over non-zero blocks only (about 1/|group| of the dense
 *    flops) and the element passes touch only stored elements. Without symmetry there is one
 *    block and the kernel is the dense one.
 *  - The constructor reads the tensors through their stores (<ia|fb> one occupied tile at a time)
 *    and repacks what it needs; the tensors may be freed afterwards.
 */
#include <array>
#include <vector>

#include "tilecc/kernels/triples.hpp"
#include "tilecc/node_shared.hpp"
#include "tilecc/node_slices.hpp"
#include "tilecc/tensor.hpp"

namespace tilecc::kernels {

/** Spatial-orbital tensors over one occupied space o and one virtual space v (t1's), orbitals
 * in the spaces' irrep-sorted order; orbital energies are the spaces'. */
struct ClosedShellTriplesInputs {
  const BlockTensor* ovvv = nullptr;  ///< (ia|fb) over (o, v, v, v)
  const BlockTensor* ovoo = nullptr;  ///< (ia|jk) over (o, v, o, o)
  const BlockTensor* ovov = nullptr;  ///< (ia|jb) over (o, v, o, v)
  const BlockTensor* t2 = nullptr;    ///< t_ij^ab over (o, o, v, v)
  const BlockTensor* t1 = nullptr;    ///< t_i^a over (o, v)
  const BlockTensor* fov = nullptr;   ///< f_ia over (o, v)
  /** What the repacked inputs are held against (null: uncounted): the runtime's budget. */
  std::shared_ptr<MemoryBudget> budget;
  /** Refuses a missing tensor or one over other spaces, in one sentence. */
  void check() const;
};

class ClosedShellTriples final : public TriplesKernel {
 public:
  static constexpr int irreps = 8;

  explicit ClosedShellTriples(const ClosedShellTriplesInputs& in);
  /** The work alone, for spaces o and v: steps, tasks, costs and times, but no energies. */
  ClosedShellTriples(const IndexSpace& o, const IndexSpace& v);

  extent_t steps() const override { return no_; }
  extent_t tasks(extent_t i) const override { return occupied_pairs(no_, i, false); }
  double scale() const override { return 2.0 / 6.0; }
  extent_t scratch_doubles() const override;
  /** The triple's stored W elements. */
  double cost(extent_t i, extent_t task) const override;
  double flops(extent_t i, extent_t task) const override;
  /** The triple's summand, times its distinct orderings. */
  double energy(extent_t i, extent_t task, double* scratch, int worker) const override;
  double predicted_seconds(extent_t i, extent_t task, const CostModel& model) const override;
  std::int64_t held_bytes() const override;
  std::int64_t input_bytes() const override;
  std::int64_t fetched_bytes() const override;
  std::vector<std::size_t> slice_doubles() const override;
  std::vector<extent_t> task_orbitals(extent_t i, extent_t task) const override;

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
  /** An occupied orbital p's slices of the repacked inputs. */
  struct Slices {
    const double *x, *tm, *t2, *ovov, *iajm;
  };
  /** The connected part of one ordering (p, q, r) in its own axes, into w0 (overwritten). */
  void connected(int g, extent_t p, const Slices& sp, extent_t q, extent_t r, const Slices& sr,
                 double* w0) const;
  /** x = w + V/2, V the disconnected triples of the triple occ (slices: its orbitals'). */
  void add_disconnected(int g, const std::array<extent_t, 3>& occ,
                        const std::array<Slices, 3>& slices, const double* w, double* x) const;
  template <class Body>
  void for_each_block(int g, Body&& body) const;
  /** body(m, n, k) for each GEMM of the triple (i, j, k). */
  template <class Body>
  void for_each_gemm(extent_t i, extent_t j, extent_t k, Body&& body) const;

  extent_t no_, nv_;
  bool has_inputs_ = false;
  std::vector<int> occ_irrep_;
  std::array<extent_t, irreps> occ_off_{}, occ_n_{}, vir_off_{}, vir_n_{};
  // Packed layout of a W of symmetry g: block (ga, gb) at block_off_[g][ga][gb], group gab at
  // group_off_[g][gab]; row_off_[gab][ga] is block ga's first (a, b) row within its group.
  std::array<Table, irreps> block_off_{};
  Table group_off_{};
  Table row_off_{};
  std::array<extent_t, irreps> group_rows_{}, size_{};
  std::array<extent_t, irreps> rows_{};  // of a W of symmetry g: its contiguous runs
  // Per occupied p, a slice of each, spread over the nodes (slice p of all on one node): (pa|fb)
  // as one [(a, b) rows of group gab][f] matrix per gab; t_mp^bc as one [m][b][c] matrix per
  // (gb, gc); t_pq^ab as [q][a][b]; (pa|qb) as [a][q][b]; (pa|mq) as [a][q][m].
  NodeSlices x_, tm_, t2_, ovov_, iajm_;
  std::vector<std::array<extent_t, irreps>> x_off_;  // [p][gab], within p's slice
  std::vector<Table> tm_off_;                        // [p][gb][gc], within p's slice
  std::vector<std::size_t> x_size_, tm_size_;        // [p], doubles of p's slice
  std::vector<double> t1_, fov_, eo_, ev_;
};

}  // namespace tilecc::kernels
