#pragma once
/** @file The spin-orbital (T) energy of any single-determinant reference (UHF; ROHF on
 * semicanonical orbitals), one occupied triple i < j < k at a time, fused and over its non-zero
 * spin and point-group blocks only (a TriplesKernel, see kernels/triples.hpp): step i, one task per
 * pair j < k after it.
 *
 * Kernel contract:
 *  - A triple's summand is sum_abc W_abc X_abc / D_abc where, with P(a/bc) x_abc = x_abc - x_bac -
 *    x_cba and P(i/jk) f(i, j, k) = f(i, j, k) - f(j, i, k) - f(k, j, i),
 *      W = P(a/bc) P(i/jk) [ -sum_e t_jk^ae <ie||bc> - sum_m t_im^bc <jk||ma> ],
 *      X = W + P(a/bc) P(i/jk) [ t_i^a <jk||bc> + f_ia t_jk^bc ],
 *      D = f_ii + f_jj + f_kk - f_aa - f_bb - f_cc,
 *    (J. F. Stanton, Chem. Phys. Lett. 281, 130 (1997)). The (T) energy is 1/36 of its sum over all
 *    (i, j, k); it vanishes when two of them coincide.
 *  - Symmetry: an orbital's label is its spin and irrep; a product's is its number of beta
 *    orbitals and the XOR of its irreps. W is non-zero only where the label of (a, b, c) is that of
 *    (i, j, k), and is stored packed: for each label of a, rows a, columns the (b, c) pairs whose
 *    label completes it, grouped by the label of b. Both GEMMs run once per label of a, over
 *    non-zero blocks only: a UHF triple of one spin case costs what a spin-integrated code pays
 *    for it, and point-group symmetry divides it further.
 *  - Orbitals are spin orbitals sorted by spin (alpha first), then irrep: each label is a
 *    contiguous range.
 */
#include <array>
#include <vector>

#include "tilecc/kernels/triples.hpp"
#include "tilecc/node_shared.hpp"
#include "tilecc/node_slices.hpp"
#include "tilecc/tensor.hpp"

namespace tilecc::kernels {

/** Antisymmetrized spin-orbital tensors over one occupied space o and one virtual space v (t1's);
 * orbital energies are the spaces'. */
struct SpinOrbitalTriplesInputs {
  const BlockTensor* ovvv = nullptr;  ///< <ie||bc> over (o, v, v, v)
  const BlockTensor* ooov = nullptr;  ///< <jk||ma> over (o, o, o, v)
  const BlockTensor* oovv = nullptr;  ///< <jk||bc> over (o, o, v, v)
  const BlockTensor* t2 = nullptr;    ///< t_ij^ab over (o, o, v, v)
  const BlockTensor* t1 = nullptr;    ///< t_i^a over (o, v)
  const BlockTensor* fov = nullptr;   ///< f_ia over (o, v)
  /** What the repacked inputs are held against (null: uncounted): the runtime's budget. */
  std::shared_ptr<MemoryBudget> budget;
};

class SpinOrbitalTriples final : public TriplesKernel {
 public:
  /** Orbital labels (spin, irrep); labels of pairs and triples (beta count, irrep). */
  static constexpr int orbital_labels = 16, pair_labels = 24, triple_labels = 32;

  explicit SpinOrbitalTriples(const SpinOrbitalTriplesInputs& in);
  /** The work alone, for spaces o and v: steps, tasks, costs and times, but no energies. */
  SpinOrbitalTriples(const IndexSpace& o, const IndexSpace& v);

  extent_t steps() const override { return no_; }
  extent_t tasks(extent_t i) const override;
  double scale() const override { return 1.0 / 36.0; }
  extent_t scratch_doubles() const override;
  /** The triple's stored W elements. */
  double cost(extent_t i, extent_t task) const override;
  double flops(extent_t i, extent_t task) const override;
  /** The triple's summand, times its 6 orderings. */
  double energy(extent_t i, extent_t task, double* scratch, int worker) const override;
  double predicted_seconds(extent_t i, extent_t task, const CostModel& model) const override;
  std::int64_t held_bytes() const override;
  std::int64_t input_bytes() const override;
  std::int64_t fetched_bytes() const override;
  std::vector<std::size_t> slice_doubles() const override;
  std::vector<extent_t> task_orbitals(extent_t i, extent_t task) const override;

 private:
  using Ranges = std::array<extent_t, orbital_labels>;
  /** Where element (a, b, c) of one target block sits in a source of the same label:
   *  base + a * sa + b * sb + c * sc. */
  struct View {
    extent_t base, sa, sb, sc;
  };

  int triple_label(extent_t i, extent_t j, extent_t k) const;
  View view(int g, const std::array<int, 3>& axes, const std::array<int, 3>& block) const;
  /** dst = x - x_bac - x_cba over the packed blocks of label g. */
  void antisymmetrize(int g, const double* x, double* dst) const;
  /** An occupied orbital p's slices of the repacked inputs. */
  struct Slices {
    const double *x, *tm, *t2, *oovv, *ooov;
  };
  /** y += sign * (sum_e t_qr^ae <pe||bc> + sum_m t_pm^bc <qr||ma>), sp and sq the slices of p and
   *  q. */
  void connected(int g, extent_t p, const Slices& sp, const Slices& sq, extent_t r, double sign,
                 double* y) const;
  /** y += sign * (t_p^a <qr||bc> + f_pa t_qr^bc). */
  void disconnected(int g, extent_t p, const Slices& sq, extent_t r, double sign, double* y) const;
  template <class Body>
  void for_each_block(int g, Body&& body) const;
  /** body(m, n, k) for each GEMM of the triple (i, j, k). */
  template <class Body>
  void for_each_gemm(extent_t i, extent_t j, extent_t k, Body&& body) const;

  extent_t no_ = 0, nv_ = 0;
  bool has_inputs_ = false;
  std::vector<int> occ_label_;
  Ranges occ_off_{}, occ_n_{}, vir_off_{}, vir_n_{};
  // Packed W of label g: rows a of label la at w_off_[g][la], each cols_[gbc] long (gbc the label
  // completing la to g); within a row, the (b, c) pairs of label lb start at col_off_[gbc][lb].
  std::array<std::array<extent_t, orbital_labels>, triple_labels> w_off_{};
  std::array<extent_t, triple_labels> size_{};
  std::array<extent_t, triple_labels> rows_{};  // of a W of label g: its contiguous runs
  std::array<extent_t, pair_labels> cols_{};
  std::array<Ranges, pair_labels> col_off_{};
  // Per occupied p, a slice of each, spread over the nodes (slice p of all on one node): <pe||bc>
  // and t_pm^bc as one [e or m][(b, c) columns of gbc] matrix per gbc; t_pq^bc, <pq||bc> and
  // <pq||ma> as [q][b][c], [q][b][c] and [q][m][a].
  NodeSlices x_, tm_, t2_, oovv_, ooov_;
  std::vector<std::array<extent_t, pair_labels>> x_off_, tm_off_;  // within p's slice
  std::vector<std::size_t> x_size_, tm_size_;                      // [p], doubles of p's slice
  std::vector<double> t1_, fov_, eo_, ev_;
};

}  // namespace tilecc::kernels
