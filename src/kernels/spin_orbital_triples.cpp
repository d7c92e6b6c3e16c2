// The fused spin-orbital (T) kernel for one occupied triple i < j < k. For each of the three
// orderings of P(i/jk), two GEMMs per label of a add that ordering's connected terms into Y; W is
// P(a/bc) Y. The disconnected terms are then added to Y row by row, and X = P(a/bc) Y.
#include "tilecc/kernels/spin_orbital_triples.hpp"

#include <algorithm>

#include "permuted_sum.hpp"
#include "tilecc/blas.hpp"
#include "tilecc/error.hpp"
#include "triples_inputs.hpp"

namespace tilecc::kernels {
namespace {

std::size_t u(int g) { return static_cast<std::size_t>(g); }
std::size_t u(extent_t n) { return static_cast<std::size_t>(n); }

// A label is (number of beta orbitals) * 8 + irrep: an orbital's, or a product's.
int beta_count(int label) { return label >> 3; }
int combine(int x, int y) { return (beta_count(x) + beta_count(y)) * 8 + ((x ^ y) & 7); }
// The label z with combine(z, part) == total holding at most `most` beta orbitals, or -1.
int remainder(int total, int part, int most) {
  const int betas = beta_count(total) - beta_count(part);
  return betas < 0 || betas > most ? -1 : betas * 8 + ((total ^ part) & 7);
}

// Offset and size of each orbital label's range; refuses orbitals not sorted by label.
template <class Ranges>
std::vector<int> label_ranges(const IndexSpace& space, Ranges& off, Ranges& size) {
  std::vector<int> labels;
  for (const Orbital& orbital : space.orbitals()) {
    TILECC_CHECK(orbital.spin != Spin::none &&
                     (labels.empty() ||
                      labels.back() <= (orbital.spin == Spin::beta ? 8 : 0) + orbital.irrep),
                 "spin-orbital (T): the orbitals of ", space.describe(),
                 " must be spin orbitals sorted by spin, then irrep.");
    labels.push_back((orbital.spin == Spin::beta ? 8 : 0) + orbital.irrep);
    ++size[u(labels.back())];
  }
  for (std::size_t l = 1; l < off.size(); ++l) off[l] = off[l - 1] + size[l - 1];
  return labels;
}

}  // namespace

// The layout: everything but the inputs.
SpinOrbitalTriples::SpinOrbitalTriples(const IndexSpace& o, const IndexSpace& v) {
  no_ = o.size(), nv_ = v.size();
  occ_label_ = label_ranges(o, occ_off_, occ_n_);
  label_ranges(v, vir_off_, vir_n_);

  for (int gbc = 0; gbc < pair_labels; ++gbc) {
    extent_t cols = 0;
    for (int lb = 0; lb < orbital_labels; ++lb) {
      col_off_[u(gbc)][u(lb)] = cols;
      const int lc = remainder(gbc, lb, 1);
      if (lc >= 0) cols += vir_n_[u(lb)] * vir_n_[u(lc)];
    }
    cols_[u(gbc)] = cols;
  }
  for (int g = 0; g < triple_labels; ++g) {
    extent_t off = 0;
    for (int la = 0; la < orbital_labels; ++la) {
      w_off_[u(g)][u(la)] = off;
      const int gbc = remainder(g, la, 2);
      if (gbc >= 0) off += vir_n_[u(la)] * cols_[u(gbc)];
    }
    size_[u(g)] = off;
    for_each_block(g,
                   [&](int la, int lb, int, int) { rows_[u(g)] += vir_n_[u(la)] * vir_n_[u(lb)]; });
  }
  // Slice p of <pe||bc> and t_pm^bc: one [e or m][(b, c)] matrix per gbc, the e or m of the
  // label completing p to gbc; of t_pq^bc, <pq||ma> and <pq||bc>: [q][b][c], [q][m][a], [q][b][c].
  auto layout = [&](std::vector<std::array<extent_t, pair_labels>>& at, const Ranges& row_n,
                    std::vector<std::size_t>& slice) {
    at.resize(u(no_));
    slice.assign(u(no_), 0);
    for (extent_t p = 0; p < no_; ++p)
      for (int gbc = 0; gbc < pair_labels; ++gbc) {
        at[u(p)][u(gbc)] = static_cast<extent_t>(slice[u(p)]);
        const int le = remainder(gbc, occ_label_[u(p)], 1);
        if (le >= 0) slice[u(p)] += u(row_n[u(le)] * cols_[u(gbc)]);
      }
  };
  layout(x_off_, vir_n_, x_size_);
  layout(tm_off_, occ_n_, tm_size_);
  eo_ = detail::energies(o);
  ev_ = detail::energies(v);
}

SpinOrbitalTriples::SpinOrbitalTriples(const SpinOrbitalTriplesInputs& in)
    : SpinOrbitalTriples(detail::t1_space(in.t1, 0), detail::t1_space(in.t1, 1)) {
  const IndexSpace &o = in.t1->shape().space(0), &v = in.t1->shape().space(1);
  detail::check_spaces(in.ovvv, "<ie||bc>", {&o, &v, &v, &v});
  detail::check_spaces(in.ooov, "<jk||ma>", {&o, &o, &o, &v});
  detail::check_spaces(in.oovv, "<jk||bc>", {&o, &o, &v, &v});
  detail::check_spaces(in.t2, "t2", {&o, &o, &v, &v});
  detail::check_spaces(in.fov, "f_ov", {&o, &v});
  const extent_t no = no_, nv = nv_;
  // The repacked inputs, each a slice per occupied p, spread over the nodes (every array's slice
  // p on one node): on each node its first rank reads and writes those the node holds.
  const std::shared_ptr<Communicator> comm = detail::communicator_of(*in.t2);
  const bool writes = NodeShared::writes_on(comm.get());
  const std::vector<std::size_t> weight = slice_doubles();
  const std::vector<std::size_t> ovv(u(no), u(no * nv * nv)), oov(u(no), u(no * no * nv));
  x_ = NodeSlices(x_size_, comm, weight, in.budget);
  tm_ = NodeSlices(tm_size_, comm, weight, in.budget);
  t2_ = NodeSlices(ovv, comm, weight, in.budget);
  oovv_ = NodeSlices(ovv, comm, weight, in.budget);
  ooov_ = NodeSlices(oov, comm, weight, in.budget);
  const auto held = [&](extent_t p) { return x_.held(u(p)); };
  // Slice p of dst from a dense [p][e or m][b][c] slab of the orbitals p0...
  auto pack = [&](NodeSlices& dst, const std::vector<std::array<extent_t, pair_labels>>& at,
                  const Ranges& row_off, const Ranges& row_n, extent_t p0, extent_t np,
                  const double* slab) {
    const extent_t rows_in = static_cast<extent_t>(row_off.back() + row_n.back());
    for (extent_t p = p0; p < p0 + np; ++p)
      for (int gbc = 0; gbc < pair_labels && held(p); ++gbc) {
        const int le = remainder(gbc, occ_label_[u(p)], 1);
        if (le < 0) continue;
        const extent_t cols = cols_[u(gbc)];
        for (extent_t e = 0; e < row_n[u(le)]; ++e)
          for (int lb = 0; lb < orbital_labels; ++lb) {
            const int lc = remainder(gbc, lb, 1);
            if (lc < 0) continue;
            const extent_t nb = vir_n_[u(lb)], nc = vir_n_[u(lc)];
            double* row =
                dst.writable(u(p)) + at[u(p)][u(gbc)] + e * cols + col_off_[u(gbc)][u(lb)];
            for (extent_t b = 0; b < nb; ++b) {
              const double* src =
                  slab +
                  (((p - p0) * rows_in + row_off[u(le)] + e) * nv + vir_off_[u(lb)] + b) * nv +
                  vir_off_[u(lc)];
              std::copy_n(src, nc, row + b * nc);
            }
          }
      }
  };
  if (writes) {
    detail::for_each_first_tile(
        *in.ovvv,
        [&](extent_t p0, extent_t np, const double* slab) {
          pack(x_, x_off_, vir_off_, vir_n_, p0, np, slab);
        },
        held);
    detail::read_slices(*in.t2, t2_);
    detail::read_slices(*in.oovv, oovv_);
    detail::read_slices(*in.ooov, ooov_);
    for (extent_t p = 0; p < no; ++p)
      if (held(p)) pack(tm_, tm_off_, occ_off_, occ_n_, p, 1, t2_.writable(u(p)));
  }
  t1_ = read_dense(*in.t1);
  fov_ = read_dense(*in.fov);
  NodeSlices::publish({&x_, &tm_, &t2_, &oovv_, &ooov_});
  has_inputs_ = true;
}

std::int64_t SpinOrbitalTriples::held_bytes() const {
  return kernels::held_bytes({&t1_, &fov_, &eo_, &ev_}, {}, {&x_, &tm_, &t2_, &oovv_, &ooov_});
}

std::int64_t SpinOrbitalTriples::input_bytes() const {
  return spread_input_bytes(slice_doubles(), no_, nv_);
}

std::vector<std::size_t> SpinOrbitalTriples::slice_doubles() const {
  // t2 and <pq||bc>, o v^2 each, and <pq||ma>, o^2 v, per p besides <pe||bc> and t_pm^bc.
  return kernels::slice_doubles(x_size_, tm_size_, u(2 * no_ * nv_ * nv_ + no_ * no_ * nv_));
}

std::vector<extent_t> SpinOrbitalTriples::task_orbitals(extent_t i, extent_t task) const {
  const auto [j, k] = occupied_pair(no_, i, task, true);
  return {i, j, k};
}

std::int64_t SpinOrbitalTriples::fetched_bytes() const {
  return kernels::fetched_bytes({&x_, &tm_, &t2_, &oovv_, &ooov_});
}

extent_t SpinOrbitalTriples::scratch_doubles() const {
  return 3 * *std::max_element(size_.begin(), size_.end());  // Y, W and X
}

int SpinOrbitalTriples::triple_label(extent_t i, extent_t j, extent_t k) const {
  return combine(combine(occ_label_[u(i)], occ_label_[u(j)]), occ_label_[u(k)]);
}

extent_t SpinOrbitalTriples::tasks(extent_t i) const { return occupied_pairs(no_, i, true); }

double SpinOrbitalTriples::cost(extent_t i, extent_t task) const {
  const std::array<extent_t, 2> jk = occupied_pair(no_, i, task, true);
  const extent_t j = jk[0], k = jk[1];
  return static_cast<double>(size_[u(triple_label(i, j, k))]);
}

template <class Body>
void SpinOrbitalTriples::for_each_gemm(extent_t i, extent_t j, extent_t k, Body&& body) const {
  const int g = triple_label(i, j, k);
  // Each of the three orderings of P(i/jk) runs the GEMMs of connected(): per label of a, rows
  // a, columns (b, c), over e and over m.
  for (const extent_t p : {i, j, k})
    for (int la = 0; la < orbital_labels; ++la) {
      const int gbc = remainder(g, la, 2);
      const int le = gbc < 0 ? -1 : remainder(gbc, occ_label_[u(p)], 1);
      if (le < 0) continue;
      body(vir_n_[u(la)], cols_[u(gbc)], vir_n_[u(le)]);
      body(vir_n_[u(la)], cols_[u(gbc)], occ_n_[u(le)]);
    }
}

double SpinOrbitalTriples::flops(extent_t i, extent_t task) const {
  const std::array<extent_t, 2> jk = occupied_pair(no_, i, task, true);
  double flops = 0.0;
  for_each_gemm(i, jk[0], jk[1], [&](extent_t m, extent_t n, extent_t k) {
    flops += 2.0 * static_cast<double>(m * n * k);
  });
  return flops;
}

double SpinOrbitalTriples::predicted_seconds(extent_t i, extent_t task,
                                             const CostModel& model) const {
  const std::array<extent_t, 2> jk = occupied_pair(no_, i, task, true);
  double seconds = 0.0;
  for_each_gemm(i, jk[0], jk[1], [&](extent_t m, extent_t n, extent_t k) {
    if (m * n * k > 0) seconds += model.gemm_seconds(m, n, k);
  });
  const int g = triple_label(i, jk[0], jk[1]);
  const extent_t size = size_[u(g)], rows = rows_[u(g)];
  auto pass = [&](int strided, int in_order) {
    return detail::pass_seconds(model, size, strided, in_order, rows);
  };
  // Y zeroed; W = Y - Y_bac - Y_cba (two transposed reads, Y read, W written); three orderings'
  // disconnected terms (two streams read, Y read and written); X likewise from Y; the weighted
  // sum (W and X read).
  return seconds + pass(0, 1) + pass(2, 2) + 3 * pass(0, 4) + pass(2, 2) + pass(0, 2);
}

template <class Body>
void SpinOrbitalTriples::for_each_block(int g, Body&& body) const {
  for (int la = 0; la < orbital_labels; ++la) {
    const int gbc = remainder(g, la, 2);
    if (vir_n_[u(la)] == 0 || gbc < 0) continue;
    for (int lb = 0; lb < orbital_labels; ++lb) {
      const int lc = remainder(gbc, lb, 1);
      if (vir_n_[u(lb)] > 0 && lc >= 0 && vir_n_[u(lc)] > 0) body(la, lb, lc, gbc);
    }
  }
}

SpinOrbitalTriples::View SpinOrbitalTriples::view(int g, const std::array<int, 3>& axes,
                                                  const std::array<int, 3>& block) const {
  // Target axis t lands on source axis axes[t].
  std::array<int, 3> source{};
  for (std::size_t t = 0; t < 3; ++t) source[u(axes[t])] = block[t];
  const int gbc = remainder(g, source[0], 2);
  const std::array<extent_t, 3> stride = {cols_[u(gbc)], vir_n_[u(source[2])], 1};
  return {w_off_[u(g)][u(source[0])] + col_off_[u(gbc)][u(source[1])], stride[u(axes[0])],
          stride[u(axes[1])], stride[u(axes[2])]};
}

void SpinOrbitalTriples::antisymmetrize(int g, const double* x, double* dst) const {
  static constexpr std::array<std::array<int, 3>, 3> axes = {{{0, 1, 2}, {1, 0, 2}, {2, 1, 0}}};
  static constexpr std::array<double, 3> weights = {1.0, -1.0, -1.0};
  for_each_block(g, [&](int la, int lb, int lc, int gbc) {
    const std::array<int, 3> block = {la, lb, lc};
    std::array<detail::SourceView, 3> sources{};
    for (std::size_t n = 0; n < 3; ++n) {
      const View v = view(g, axes[n], block);
      sources[n] = {x + v.base, v.sa, v.sb, v.sc, weights[n]};
    }
    detail::permuted_block_sum(dst + w_off_[u(g)][u(la)] + col_off_[u(gbc)][u(lb)], cols_[u(gbc)],
                               vir_n_[u(la)], vir_n_[u(lb)], vir_n_[u(lc)], sources);
  });
}

void SpinOrbitalTriples::connected(int g, extent_t p, const Slices& sp, const Slices& sq,
                                   extent_t r, double alpha, double* y) const {
  const extent_t no = no_, nv = nv_;
  for (int la = 0; la < orbital_labels; ++la) {
    const int gbc = remainder(g, la, 2);
    if (gbc < 0) continue;
    const extent_t na = vir_n_[u(la)], cols = cols_[u(gbc)];
    // e (or m) has the label completing p to (b, c); t_qr^ae and <qr||ma> then conserve theirs.
    const int le = remainder(gbc, occ_label_[u(p)], 1);
    if (na == 0 || cols == 0 || le < 0) continue;
    double* out = y + w_off_[u(g)][u(la)];
    if (const extent_t ne = vir_n_[u(le)]; ne > 0)
      blas::gemm(false, false, na, cols, ne, alpha,
                 sq.t2 + (r * nv + vir_off_[u(la)]) * nv + vir_off_[u(le)], nv,
                 sp.x + x_off_[u(p)][u(gbc)], cols, 1.0, out, cols);
    if (const extent_t nm = occ_n_[u(le)]; nm > 0)
      blas::gemm(true, false, na, cols, nm, alpha,
                 sq.ooov + (r * no + occ_off_[u(le)]) * nv + vir_off_[u(la)], nv,
                 sp.tm + tm_off_[u(p)][u(gbc)], cols, 1.0, out, cols);
  }
}

void SpinOrbitalTriples::disconnected(int g, extent_t p, const Slices& sq, extent_t r, double sign,
                                      double* y) const {
  const extent_t nv = nv_;
  for_each_block(g, [&](int la, int lb, int lc, int gbc) {
    const extent_t nb = vir_n_[u(lb)], nc = vir_n_[u(lc)], cols = cols_[u(gbc)];
    for (extent_t a = 0; a < vir_n_[u(la)]; ++a) {
      const extent_t pa = p * nv + vir_off_[u(la)] + a;
      const double alpha = sign * t1_[u(pa)], beta = sign * fov_[u(pa)];
      if (alpha == 0.0 && beta == 0.0) continue;
      double* rows = y + w_off_[u(g)][u(la)] + a * cols + col_off_[u(gbc)][u(lb)];
      for (extent_t b = 0; b < nb; ++b) {
        const extent_t at = (r * nv + vir_off_[u(lb)] + b) * nv + vir_off_[u(lc)];
        const double *integral = sq.oovv + at, *amplitude = sq.t2 + at;
        double* row = rows + b * nc;
        for (extent_t c = 0; c < nc; ++c) row[c] += alpha * integral[c] + beta * amplitude[c];
      }
    }
  });
}

double SpinOrbitalTriples::energy(extent_t i, extent_t task, double* scratch, int worker) const {
  detail::check_inputs(has_inputs_, "spin-orbital");
  const std::array<extent_t, 2> jk = occupied_pair(no_, i, task, true);
  const extent_t j = jk[0], k = jk[1];
  const int g = triple_label(i, j, k);
  const extent_t size = size_[u(g)];
  double *y = scratch, *w = scratch + size, *x = scratch + 2 * size;
  struct Ordering {
    extent_t p, q, r;
    double sign;
  };
  const std::array<Ordering, 3> orderings = {{{i, j, k, 1.0}, {j, i, k, -1.0}, {k, j, i, -1.0}}};
  // The slices of the triple's orbitals, in place or got from the nodes that hold them.
  auto slices_of = [&](extent_t p) -> Slices {
    return {x_.read(u(p), worker), tm_.read(u(p), worker), t2_.read(u(p), worker),
            oovv_.read(u(p), worker), ooov_.read(u(p), worker)};
  };
  const std::array<Slices, 3> of = {slices_of(i), slices_of(j), slices_of(k)};
  auto slices = [&](extent_t p) -> const Slices& { return of[p == i ? 0 : p == j ? 1 : 2]; };

  std::fill_n(y, size, 0.0);
  for (const Ordering& o : orderings) connected(g, o.p, slices(o.p), slices(o.q), o.r, -o.sign, y);
  antisymmetrize(g, y, w);
  for (const Ordering& o : orderings) disconnected(g, o.p, slices(o.q), o.r, o.sign, y);
  antisymmetrize(g, y, x);

  const double e_occ = eo_[u(i)] + eo_[u(j)] + eo_[u(k)];
  double energy = 0.0;
  for_each_block(g, [&](int la, int lb, int lc, int gbc) {
    const extent_t nb = vir_n_[u(lb)], nc = vir_n_[u(lc)], cols = cols_[u(gbc)];
    const double* ec = ev_.data() + vir_off_[u(lc)];
    for (extent_t a = 0; a < vir_n_[u(la)]; ++a)
      for (extent_t b = 0; b < nb; ++b) {
        const double d_ab = e_occ - ev_[u(vir_off_[u(la)] + a)] - ev_[u(vir_off_[u(lb)] + b)];
        const extent_t at = w_off_[u(g)][u(la)] + a * cols + col_off_[u(gbc)][u(lb)] + b * nc;
        for (extent_t c = 0; c < nc; ++c) energy += w[at + c] * x[at + c] / (d_ab - ec[c]);
      }
  });
  return 6.0 * energy;
}

}  // namespace tilecc::kernels
