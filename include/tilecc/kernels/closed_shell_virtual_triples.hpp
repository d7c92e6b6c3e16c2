#pragma once
/** @file The closed-shell (T) energy, one virtual triple (a, b, c) at a time, fused and with
 * point-group symmetry (a TriplesKernel, see kernels/triples.hpp), from the inputs of the
 * occupied-triple loop (kernels/closed_shell_triples.hpp): Rendell's loop order (A. P.
 * Rendell, T. J. Lee, A. Komornicki, Chem. Phys. Lett. 178, 462 (1991)), whose per-triple arrays
 * are o^3 and stay in cache while its GEMMs run over ranges of c at once.
 *
 * Kernel contract:
 *  - A virtual triple's summand is sum_ijk W_ijk Z_ijk / D_ijk where, with S the sum over the six
 *    simultaneous orderings of (i,j,k) and (a,b,c),
 *      W = S[ sum_f (ia|fb) t_kj^cf - sum_m (ia|mj) t_mk^bc ],
 *      X = W + (ia|jb) t_kc + f_kc t_ij^ab + (ia|kc) t_jb + f_jb t_ik^ac + (jb|kc) t_ia
 *            + f_ia t_jk^bc,
 *      Z = 4 X_ijk + X_jki + X_kij - 2 X_kji - 2 X_ikj - 2 X_jik (occupied transposes),
 *      D = e_i + e_j + e_k - e_a - e_b - e_c.
 *    It is symmetric in (a, b, c); the (T) energy is 2/6 of its sum over all of them. A task is
 *    a pair a >= b and computes every c <= b, each weighted by its distinct orderings (6, 3, 1);
 *    steps group consecutive pairs into runs of similar work.
 *  - Symmetry: orbitals carry D2h-subgroup irreps (0-7, products by XOR) and arrive sorted by
 *    irrep. For a virtual triple of irrep G, W is non-zero only where irrep(i) ^ irrep(j) ^
 *    irrep(k) = G and is stored packed: for each irrep of its first axis, rows i, columns the
 *    (j, k) pairs whose irrep completes it to G, grouped by the irrep of j. The GEMMs run over
 *    non-zero blocks only.
 *  - The constructor reads the tensors through their stores ((ia|fb) one occupied tile at a
 *    time) and repacks what it needs, once per node (NodeShared: the node's first rank reads
 *    and writes, its other ranks share them); the tensors may be freed afterwards.
 */
#include <array>
#include <vector>

#include "tilecc/kernels/closed_shell_triples.hpp"
#include "tilecc/node_shared.hpp"

namespace tilecc::kernels {

class ClosedShellVirtualTriples final : public TriplesKernel {
 public:
  static constexpr int irreps = 8;

  explicit ClosedShellVirtualTriples(const ClosedShellTriplesInputs& in);
  /** The work alone, for spaces o and v: steps, tasks, costs and times, but no energies. */
  ClosedShellVirtualTriples(const IndexSpace& o, const IndexSpace& v);

  extent_t steps() const override { return static_cast<extent_t>(step_first_.size()) - 1; }
  extent_t tasks(extent_t step) const override;
  double scale() const override { return 2.0 / 6.0; }
  extent_t scratch_doubles() const override;
  double cost(extent_t step, extent_t task) const override { return flops(step, task); }
  double flops(extent_t step, extent_t task) const override;
  double energy(extent_t step, extent_t task, double* scratch, int worker) const override;
  double predicted_seconds(extent_t step, extent_t task, const CostModel& model) const override;
  std::int64_t held_bytes() const override;
  std::int64_t input_bytes() const override;

 private:
  using Table = std::array<std::array<extent_t, irreps>, irreps>;
  /** An array of occupied triples for one chunk of c, of symmetry G: for each irrep g0 of its
   *  first axis a group at base[g0], rows `row[g0]` apart, the next c `step[g0]` further; within
   *  a row the packed (second, third) pairs of irrep G ^ g0. */
  struct Slab {
    const double* data;
    std::array<extent_t, irreps> base, row, step;
  };
  /** A chunk of c: [c0, c0 + n) within one irrep. */
  struct Chunk {
    extent_t c0, n;
    int gc;
  };

  /** One GEMM of a job (a term of two orderings, see connected) over irrep g0 of its rows, for
   *  a chunk of nc c's of the triple irreps (irrep(a), irrep(b), irrep(c)). */
  struct JobGemm {
    bool c_fastest;  // the chunk's c's are columns (else rows)
    extent_t rows, pairs, m, n, k;
  };
  JobGemm job_gemm(bool f_term, int ordering, const std::array<int, 3>& irrep, int g0,
                   extent_t nc) const;
  std::array<extent_t, 2> pair(extent_t step, extent_t task) const;
  /** The flops of one virtual triple of irreps (ga, gb, gc), over its six orderings. */
  double triple_flops(int ga, int gb, int gc) const;
  /** The slab of the `which`-th of two orderings stacked in `data`, whose c runs fastest within a
   *  row (rows [c] ...) or slowest ([c] rows ...). */
  Slab stacked_slab(const double* data, int g, extent_t nc, int which, bool c_fastest) const;
  /** One term (f or m) of two orderings of (a, b, c) that share an operand, for a chunk of c:
   *  one GEMM per irrep over both orderings' rows stacked (in `stack`), into `out`; the slabs of
   *  the two orderings. */
  std::array<Slab, 2> connected(const std::array<extent_t, 3>& abc, const Chunk& chunk, bool f_term,
                                const std::array<int, 2>& pair, const double* gathered_a,
                                const double* gathered_b, double* stack, double* out) const;
  /** x = w + the disconnected triples, for one c. */
  void add_disconnected(int g, const std::array<extent_t, 3>& abc, const double* w,
                        double* x) const;
  /** Sum of w z / D over the stored elements of symmetry g for one (a, b, c). */
  double weighted_sum(int g, const std::array<extent_t, 3>& abc, const double* w,
                      const double* z) const;
  template <class Body>
  void for_each_block(int g, Body&& body) const;

  extent_t no_ = 0, nv_ = 0;
  bool has_inputs_ = false;
  std::vector<int> vir_irrep_;
  std::array<extent_t, irreps> occ_off_{}, occ_n_{}, vir_off_{}, vir_n_{};
  // Occupied pairs of irrep h: npairs_[h] of them, those whose first is of irrep g1 from
  // pair_off_[h][g1], [first][second] row-major.
  std::array<extent_t, irreps> npairs_{};
  Table pair_off_{};
  // A packed o^3 array of symmetry G: group g0 at w_off_[G][g0], size_[G] in all.
  Table w_off_{};
  std::array<extent_t, irreps> size_{};
  std::array<extent_t, irreps> rows_{};  // of the o^3 array of symmetry G: its contiguous runs
  // How many c a chunk of symmetry G holds (W and two stacked terms stay in cache).
  std::array<extent_t, irreps> chunk_{};
  extent_t stack_doubles_ = 0;  // the largest stacked GEMM operand
  // Steps: tasks (a, b), a >= b, in order; step s runs tasks [step_first_[s], step_first_[s+1]).
  std::vector<extent_t> step_first_;
  std::vector<std::array<extent_t, 2>> tasks_;
  std::array<std::array<std::array<double, irreps>, irreps>, irreps> triple_flops_{};

  // (px|fy) per (x, irrep(p), y): [p][f], f of irrep(p) ^ irrep(x) ^ irrep(y).
  NodeShared pxfy_;
  // Doubles of the repacked arrays (t2m: each of its two orders).
  extent_t pxfy_doubles_ = 0, t2f_doubles_ = 0, t2m_doubles_ = 0, ovoo_doubles_ = 0;
  std::vector<extent_t> pxfy_off_;  // [(x * irreps + gp) * nv + y]
  // What a task gathers per y: (pc|fy) for every c, per (irrep(p), c), [p][f]; the first c of
  // irrep gc at gathered_off_[irrep(y)][irrep(p)][gc].
  std::array<Table, irreps> gathered_off_{};
  extent_t gathered_doubles_ = 0;
  // t_rq^zf per (pair irrep h, z): [(q, r) pairs of h][f], f of h ^ irrep(z).
  NodeShared t2f_;
  std::vector<extent_t> t2f_off_;  // [h * nv + z]
  // (px|mq) per (pair irrep h, x): [(p, q) pairs of h][m], m of h ^ irrep(x).
  NodeShared ovoo_;
  std::vector<extent_t> ovoo_off_;  // [h * nv + x]
  // t_mr^yz as [r][m] per (y, irrep(r), z) (z runs fastest) and per (z, irrep(r), y).
  NodeShared t2m_yz_, t2m_zy_;
  std::vector<extent_t> t2m_yz_off_, t2m_zy_off_;  // [(y * irreps + gr) * nv + z], likewise
  // (ia|jb) and t_ij^ab as [a][b][i][j]; t1 and f_ov as [a][i].
  NodeShared ovov_, t2_;
  std::vector<double> t1_, fov_, eo_, ev_;
};

}  // namespace tilecc::kernels
