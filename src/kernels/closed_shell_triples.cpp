// The fused closed-shell (T) kernel for one occupied triple. Per ordering s of (i,j,k), GEMMs over
// the non-zero symmetry blocks give that ordering's connected W0_s; a permuted sum of the six
// gives W; the disconnected V is added row by row (contiguous reads only) to give X; one more
// permuted sum gives r3(X).
#include "tilecc/kernels/closed_shell_triples.hpp"

#include <algorithm>

#include "permuted_sum.hpp"
#include "tilecc/blas.hpp"
#include "tilecc/error.hpp"
#include "triples_inputs.hpp"

namespace tilecc::kernels {
namespace {

using Perm = std::array<int, 3>;
constexpr std::array<Perm, 6> orderings = {
    {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}};
// r3's five transposed terms (the ordering each reads) and their weights; X itself has weight 4.
constexpr std::array<Perm, 5> r3_orders = {{{1, 2, 0}, {2, 0, 1}, {2, 1, 0}, {0, 2, 1}, {1, 0, 2}}};
constexpr std::array<double, 5> r3_weights = {1.0, 1.0, -2.0, -2.0, -2.0};

Perm inverse(const Perm& p) {
  Perm inv{};
  for (std::size_t t = 0; t < 3; ++t) inv[static_cast<std::size_t>(p[t])] = static_cast<int>(t);
  return inv;
}

std::size_t u(int g) { return static_cast<std::size_t>(g); }
std::size_t u(extent_t n) { return static_cast<std::size_t>(n); }

}  // namespace

void ClosedShellTriplesInputs::check() const {
  const IndexSpace &o = detail::t1_space(t1, 0), &v = detail::t1_space(t1, 1);
  detail::check_spaces(ovvv, "(ia|fb)", {&o, &v, &v, &v});
  detail::check_spaces(ovoo, "(ia|jk)", {&o, &v, &o, &o});
  detail::check_spaces(ovov, "(ia|jb)", {&o, &v, &o, &v});
  detail::check_spaces(t2, "t2", {&o, &o, &v, &v});
  detail::check_spaces(fov, "f_ov", {&o, &v});
}

// The layout: everything but the inputs.
ClosedShellTriples::ClosedShellTriples(const IndexSpace& o, const IndexSpace& v) {
  no_ = o.size(), nv_ = v.size();
  for (const Orbital& orbital : o.orbitals()) occ_irrep_.push_back(orbital.irrep);
  detail::irrep_ranges(o, occ_off_, occ_n_);
  detail::irrep_ranges(v, vir_off_, vir_n_);

  for (int gab = 0; gab < irreps; ++gab) {
    extent_t rows = 0;
    for (int ga = 0; ga < irreps; ++ga) {
      row_off_[u(gab)][u(ga)] = rows;
      rows += vir_n_[u(ga)] * vir_n_[u(ga ^ gab)];
    }
    group_rows_[u(gab)] = rows;
  }
  for (int g = 0; g < irreps; ++g) {
    extent_t off = 0;
    for (int gab = 0; gab < irreps; ++gab) {
      const extent_t nc = vir_n_[u(g ^ gab)];
      group_off_[u(g)][u(gab)] = off;
      for (int ga = 0; ga < irreps; ++ga)
        block_off_[u(g)][u(ga)][u(ga ^ gab)] = off + row_off_[u(gab)][u(ga)] * nc;
      off += group_rows_[u(gab)] * nc;
    }
    size_[u(g)] = off;
    for_each_block(g, [&](int ga, int gb, int) { rows_[u(g)] += vir_n_[u(ga)] * vir_n_[u(gb)]; });
  }
  // Slice p of each input: (pa|fb) as one [(a, b)][f] matrix per gab, f in irrep(p) ^ gab;
  // t_mp^bc as one [m][b][c] matrix per (gb, gc), m in irrep(p) ^ gb ^ gc; t_pq^ab, (pa|qb) and
  // (pa|mq) as [q][a][b], [a][q][b] and [a][q][m].
  x_off_.resize(u(no_));
  tm_off_.resize(u(no_));
  x_size_.assign(u(no_), 0);
  tm_size_.assign(u(no_), 0);
  for (extent_t p = 0; p < no_; ++p) {
    const int gp = occ_irrep_[u(p)];
    for (int gab = 0; gab < irreps; ++gab) {
      x_off_[u(p)][u(gab)] = static_cast<extent_t>(x_size_[u(p)]);
      x_size_[u(p)] += u(group_rows_[u(gab)] * vir_n_[u(gp ^ gab)]);
    }
    for (int gb = 0; gb < irreps; ++gb)
      for (int gc = 0; gc < irreps; ++gc) {
        tm_off_[u(p)][u(gb)][u(gc)] = static_cast<extent_t>(tm_size_[u(p)]);
        tm_size_[u(p)] += u(occ_n_[u(gp ^ gb ^ gc)] * vir_n_[u(gb)] * vir_n_[u(gc)]);
      }
  }
  eo_ = detail::energies(o);
  ev_ = detail::energies(v);
}

ClosedShellTriples::ClosedShellTriples(const ClosedShellTriplesInputs& in)
    : ClosedShellTriples(detail::t1_space(in.t1, 0), detail::t1_space(in.t1, 1)) {
  in.check();
  const extent_t no = no_, nv = nv_, nv2 = nv * nv;
  // The repacked inputs, each a slice per occupied p, spread over the nodes (every array's slice
  // p on one node): on each node its first rank reads and writes those the node holds.
  const std::shared_ptr<Communicator> comm = detail::communicator_of(*in.t2);
  const bool writes = NodeShared::writes_on(comm.get());

  const std::vector<std::size_t> weight = slice_doubles();
  const std::vector<std::size_t> dense_ovv(u(no), u(no * nv2)), dense_voo(u(no), u(nv * no * no));
  x_ = NodeSlices(x_size_, comm, weight, in.budget);
  tm_ = NodeSlices(tm_size_, comm, weight, in.budget);
  t2_ = NodeSlices(dense_ovv, comm, weight, in.budget);
  ovov_ = NodeSlices(dense_ovv, comm, weight, in.budget);
  iajm_ = NodeSlices(dense_voo, comm, weight, in.budget);
  const auto held = [&](extent_t p) { return x_.held(u(p)); };
  if (writes) {
    detail::for_each_first_tile(
        *in.ovvv,
        [&](extent_t p0, extent_t np, const double* slab) {
          for (extent_t p = p0; p < p0 + np; ++p)
            for (int gab = 0; gab < irreps && held(p); ++gab) {
              const int gf = occ_irrep_[u(p)] ^ gab;
              const extent_t nf = vir_n_[u(gf)], f0 = vir_off_[u(gf)];
              double* dst = x_.writable(u(p)) + x_off_[u(p)][u(gab)];
              for (int ga = 0; ga < irreps; ++ga) {
                const int gb = ga ^ gab;
                const extent_t na = vir_n_[u(ga)], nb = vir_n_[u(gb)];
                for (extent_t a = 0; a < na; ++a)
                  for (extent_t b = 0; b < nb; ++b) {
                    double* row = dst + (row_off_[u(gab)][u(ga)] + a * nb + b) * nf;
                    const double* src =
                        slab + ((p - p0) * nv + vir_off_[u(ga)] + a) * nv2 + vir_off_[u(gb)] + b;
                    for (extent_t f = 0; f < nf; ++f) row[f] = src[(f0 + f) * nv];
                  }
              }
            }
        },
        held);
    detail::read_slices(*in.t2, t2_);
    detail::read_slices(*in.ovov, ovov_);
    // t_mp^bc = t_pm^cb, from slice p of t2.
    for (extent_t p = 0; p < no; ++p)
      for (int gb = 0; gb < irreps && held(p); ++gb)
        for (int gc = 0; gc < irreps; ++gc) {
          const int gm = occ_irrep_[u(p)] ^ gb ^ gc;
          const extent_t nb = vir_n_[u(gb)], nc = vir_n_[u(gc)];
          double* dst = tm_.writable(u(p)) + tm_off_[u(p)][u(gb)][u(gc)];
          const double* t2p = t2_.writable(u(p));
          for (extent_t m = 0; m < occ_n_[u(gm)]; ++m)
            for (extent_t b = 0; b < nb; ++b)
              for (extent_t c = 0; c < nc; ++c)
                dst[(m * nb + b) * nc + c] =
                    t2p[((occ_off_[u(gm)] + m) * nv + vir_off_[u(gc)] + c) * nv + vir_off_[u(gb)] +
                        b];
        }
    // (pa|mq) from the slab of (pa|mj) over [a][m][j].
    detail::for_each_first_tile(
        *in.ovoo,
        [&](extent_t p0, extent_t np, const double* slab) {
          for (extent_t p = p0; p < p0 + np; ++p) {
            if (!held(p)) continue;
            double* dst = iajm_.writable(u(p));
            const double* src = slab + (p - p0) * nv * no * no;
            for (extent_t a = 0; a < nv; ++a)
              for (extent_t m = 0; m < no; ++m)
                for (extent_t j = 0; j < no; ++j)
                  dst[(a * no + j) * no + m] = src[(a * no + m) * no + j];
          }
        },
        held);
  }
  t1_ = read_dense(*in.t1);
  fov_ = read_dense(*in.fov);
  NodeSlices::publish({&x_, &tm_, &t2_, &ovov_, &iajm_});
  has_inputs_ = true;
}

std::int64_t ClosedShellTriples::held_bytes() const {
  return kernels::held_bytes({&t1_, &fov_, &eo_, &ev_}, {}, {&x_, &tm_, &t2_, &ovov_, &iajm_});
}

std::int64_t ClosedShellTriples::input_bytes() const {
  return spread_input_bytes(slice_doubles(), no_, nv_);
}

std::vector<std::size_t> ClosedShellTriples::slice_doubles() const {
  // t2 and (pa|qb), o v^2 each, and (pa|mq), v o^2, per p besides (pa|fb) and t_mp^bc.
  return kernels::slice_doubles(x_size_, tm_size_, u(2 * no_ * nv_ * nv_ + nv_ * no_ * no_));
}

std::vector<extent_t> ClosedShellTriples::task_orbitals(extent_t i, extent_t task) const {
  const auto [j, k] = occupied_pair(no_, i, task, false);
  std::vector<extent_t> orbitals = {i, j, k};
  orbitals.erase(std::unique(orbitals.begin(), orbitals.end()), orbitals.end());
  return orbitals;
}

std::int64_t ClosedShellTriples::fetched_bytes() const {
  return kernels::fetched_bytes({&x_, &tm_, &t2_, &ovov_, &iajm_});
}

extent_t ClosedShellTriples::scratch_doubles() const {
  return 8 * *std::max_element(size_.begin(), size_.end());  // the six W0, W and X
}

double ClosedShellTriples::cost(extent_t i, extent_t task) const {
  const auto [j, k] = occupied_pair(no_, i, task, false);
  return static_cast<double>(size_[u(occ_irrep_[u(i)] ^ occ_irrep_[u(j)] ^ occ_irrep_[u(k)])]);
}

template <class Body>
void ClosedShellTriples::for_each_gemm(extent_t i, extent_t j, extent_t k, Body&& body) const {
  const int g = occ_irrep_[u(i)] ^ occ_irrep_[u(j)] ^ occ_irrep_[u(k)];
  const std::array<extent_t, 3> occ = {i, j, k};
  // Each of the six orderings (p, q, r) runs the GEMMs of connected(): over f per group (rows
  // (a, b), columns c), over m per block (rows a, columns (b, c)).
  for (const Perm& order : orderings) {
    const int gp = occ_irrep_[u(occ[u(order[0])])], gq = occ_irrep_[u(occ[u(order[1])])];
    for (int gab = 0; gab < irreps; ++gab)
      body(group_rows_[u(gab)], vir_n_[u(g ^ gab)], vir_n_[u(gp ^ gab)]);
    for_each_block(g, [&](int ga, int gb, int gc) {
      body(vir_n_[u(ga)], vir_n_[u(gb)] * vir_n_[u(gc)], occ_n_[u(gp ^ gq ^ ga)]);
    });
  }
}

double ClosedShellTriples::flops(extent_t i, extent_t task) const {
  const std::array<extent_t, 2> jk = occupied_pair(no_, i, task, false);
  double flops = 0.0;
  for_each_gemm(i, jk[0], jk[1], [&](extent_t m, extent_t n, extent_t k) {
    flops += 2.0 * static_cast<double>(m * n * k);
  });
  return flops;
}

double ClosedShellTriples::predicted_seconds(extent_t i, extent_t task,
                                             const CostModel& model) const {
  const std::array<extent_t, 2> jk = occupied_pair(no_, i, task, false);
  double seconds = 0.0;
  for_each_gemm(i, jk[0], jk[1], [&](extent_t m, extent_t n, extent_t k) {
    if (m * n * k > 0) seconds += model.gemm_seconds(m, n, k);
  });
  const int g = occ_irrep_[u(i)] ^ occ_irrep_[u(jk[0])] ^ occ_irrep_[u(jk[1])];
  const extent_t size = size_[u(g)], rows = rows_[u(g)];
  auto pass = [&](int strided, int in_order) {
    return detail::pass_seconds(model, size, strided, in_order, rows);
  };
  // W: six transposed reads, one write; X: W and the disconnected terms' twelve streams read,
  // X written; Z: six transposed reads of X, one write; the weighted sum: W and Z read.
  return seconds + pass(6, 1) + pass(0, 14) + pass(6, 1) + pass(0, 2);
}

ClosedShellTriples::View ClosedShellTriples::view(int g, const std::array<int, 3>& axes,
                                                  const std::array<int, 3>& block) const {
  // Target axis t lands on source axis axes[t].
  std::array<int, 3> source{};
  for (std::size_t t = 0; t < 3; ++t) source[u(axes[t])] = block[t];
  const extent_t n1 = vir_n_[u(source[1])], n2 = vir_n_[u(source[2])];
  const std::array<extent_t, 3> stride = {n1 * n2, n2, 1};
  return {block_off_[u(g)][u(source[0])][u(source[1])], stride[u(axes[0])], stride[u(axes[1])],
          stride[u(axes[2])]};
}

template <class Body>
void ClosedShellTriples::for_each_block(int g, Body&& body) const {
  for (int ga = 0; ga < irreps; ++ga)
    for (int gb = 0; gb < irreps; ++gb) {
      const int gc = g ^ ga ^ gb;
      if (vir_n_[u(ga)] > 0 && vir_n_[u(gb)] > 0 && vir_n_[u(gc)] > 0) body(ga, gb, gc);
    }
}

template <std::size_t N>
void ClosedShellTriples::permuted_sum(int g, double* dst, const std::array<Term, N>& terms) const {
  for_each_block(g, [&](int ga, int gb, int gc) {
    const std::array<int, 3> block = {ga, gb, gc};
    std::array<detail::SourceView, N> sources{};
    for (std::size_t n = 0; n < N; ++n) {
      const View v = view(g, terms[n].axes, block);
      sources[n] = {terms[n].src + v.base, v.sa, v.sb, v.sc, terms[n].weight};
    }
    const extent_t na = vir_n_[u(ga)], nb = vir_n_[u(gb)], nc = vir_n_[u(gc)];
    detail::permuted_block_sum(dst + block_off_[u(g)][u(ga)][u(gb)], nb * nc, na, nb, nc, sources);
  });
}

// w0 = sum_f (pa|fb) t_rq^cf - sum_m (pa|mq) t_mr^bc over the non-zero blocks of symmetry g.
void ClosedShellTriples::connected(int g, extent_t p, const Slices& sp, extent_t q, extent_t r,
                                   const Slices& sr, double* w0) const {
  const extent_t no = no_, nv = nv_;
  const int gp = occ_irrep_[u(p)], gq = occ_irrep_[u(q)];
  for (int gab = 0; gab < irreps; ++gab) {
    // One GEMM per group: rows (a, b) of the group, columns c, summed over f.
    const int gf = gp ^ gab, gc = g ^ gab;
    const extent_t rows = group_rows_[u(gab)], nc = vir_n_[u(gc)], nf = vir_n_[u(gf)];
    double* out = w0 + group_off_[u(g)][u(gab)];
    if (nf == 0)
      std::fill(out, out + rows * nc, 0.0);
    else if (rows > 0 && nc > 0)
      blas::gemm(false, true, rows, nc, nf, 1.0, sp.x + x_off_[u(p)][u(gab)], nf,
                 sr.t2 + q * nv * nv + vir_off_[u(gc)] * nv + vir_off_[u(gf)], nv, 0.0, out, nc);
  }
  for_each_block(g, [&](int ga, int gb, int gc) {
    // One GEMM per block: rows a, columns (b, c), summed over m.
    const int gm = gp ^ gq ^ ga;
    const extent_t na = vir_n_[u(ga)], nbc = vir_n_[u(gb)] * vir_n_[u(gc)], nm = occ_n_[u(gm)];
    if (nm == 0) return;
    blas::gemm(false, false, na, nbc, nm, -1.0,
               sp.iajm + (vir_off_[u(ga)] * no + q) * no + occ_off_[u(gm)], no * no,
               sr.tm + tm_off_[u(r)][u(gb)][u(gc)], nbc, 1.0, w0 + block_off_[u(g)][u(ga)][u(gb)],
               nbc);
  });
}

// x = w + V/2 with V = S[(pa|qb) t_r^c + f_r^c t_pq^ab]. Each ordering's term, read along a target
// row (fixed a, b; c running), is alpha u[c] + beta v[c] with u, v contiguous vectors: t1 and f
// rows when c is the ordering's third axis, else rows of (pa|qc) and t_pq^ac, taken through
// (pc|qb) = (qb|pc) and t_pq^cb = t_qp^bc when c is its first axis.
void ClosedShellTriples::add_disconnected(int g, const std::array<extent_t, 3>& occ,
                                          const std::array<Slices, 3>& slices, const double* w,
                                          double* x) const {
  const extent_t no = no_, nv = nv_;
  // (pa|qb) and t_pq^ab, p the triple's orbital at position `at`.
  auto integral = [&](int at, extent_t a, extent_t q, extent_t b) {
    return slices[u(at)].ovov + (a * no + q) * nv + b;
  };
  auto amplitude = [&](int at, extent_t q, extent_t a, extent_t b) {
    return slices[u(at)].t2 + (q * nv + a) * nv + b;
  };
  for_each_block(g, [&](int ga, int gb, int gc) {
    const extent_t nb = vir_n_[u(gb)], nc = vir_n_[u(gc)], c0 = vir_off_[u(gc)];
    const extent_t base = block_off_[u(g)][u(ga)][u(gb)];
    for (extent_t a = 0; a < vir_n_[u(ga)]; ++a)
      for (extent_t b = 0; b < nb; ++b) {
        const extent_t at = base + (a * nb + b) * nc;
        double* row = x + at;
        std::copy(w + at, w + at + nc, row);
        const std::array<extent_t, 3> abc = {vir_off_[u(ga)] + a, vir_off_[u(gb)] + b, c0};
        for (const Perm& order : orderings) {
          const int at_p = order[0], at_q = order[1];
          const extent_t p = occ[u(at_p)], q = occ[u(at_q)], r = occ[u(order[2])];
          const extent_t y0 = abc[u(order[0])], y1 = abc[u(order[1])], y2 = abc[u(order[2])];
          double alpha, beta;
          const double *vec_u, *vec_v;
          if (order[2] == 2) {
            alpha = *integral(at_p, y0, q, y1), beta = *amplitude(at_p, q, y0, y1);
            vec_u = t1_.data() + r * nv + c0, vec_v = fov_.data() + r * nv + c0;
          } else {
            alpha = t1_[u(r * nv + y2)], beta = fov_[u(r * nv + y2)];
            vec_u = order[1] == 2 ? integral(at_p, y0, q, c0) : integral(at_q, y1, p, c0);
            vec_v = order[1] == 2 ? amplitude(at_p, q, y0, c0) : amplitude(at_q, p, y1, c0);
          }
          alpha *= 0.5, beta *= 0.5;
          for (extent_t c = 0; c < nc; ++c) row[c] += alpha * vec_u[c] + beta * vec_v[c];
        }
      }
  });
}

double ClosedShellTriples::energy(extent_t i, extent_t task, double* scratch, int worker) const {
  detail::check_inputs(has_inputs_, "closed-shell");
  const std::array<extent_t, 2> jk = occupied_pair(no_, i, task, false);
  const extent_t j = jk[0], k = jk[1];
  const int g = occ_irrep_[u(i)] ^ occ_irrep_[u(j)] ^ occ_irrep_[u(k)];
  const extent_t size = size_[u(g)];
  const std::array<extent_t, 3> occ = {i, j, k};
  std::array<double*, 6> w0{};
  for (std::size_t s = 0; s < 6; ++s) w0[s] = scratch + static_cast<extent_t>(s) * size;
  double* w = scratch + 6 * size;
  double* x = scratch + 7 * size;
  // The slices of the triple's orbitals, in place or got from the nodes that hold them.
  std::array<Slices, 3> slices{};
  for (std::size_t t = 0; t < 3; ++t) {
    const std::size_t p = u(occ[t]);
    slices[t] = {x_.read(p, worker), tm_.read(p, worker), t2_.read(p, worker),
                 ovov_.read(p, worker), iajm_.read(p, worker)};
  }

  // W = S[W0_s], then X = W + V/2.
  std::array<Term, 6> sum{};
  for (std::size_t s = 0; s < 6; ++s) {
    const Perm& order = orderings[s];
    connected(g, occ[u(order[0])], slices[u(order[0])], occ[u(order[1])], occ[u(order[2])],
              slices[u(order[2])], w0[s]);
    sum[s] = {w0[s], inverse(order), 1.0};
  }
  permuted_sum(g, w, sum);
  add_disconnected(g, occ, slices, w, x);

  // Z = r3(X), into the first W0's space, then sum W Z / D.
  double* z = w0[0];
  std::array<Term, 6> r3{};
  r3[0] = {x, {0, 1, 2}, 4.0};
  for (std::size_t n = 0; n < 5; ++n) r3[n + 1] = {x, inverse(r3_orders[n]), r3_weights[n]};
  permuted_sum(g, z, r3);
  const double e_occ = eo_[u(i)] + eo_[u(j)] + eo_[u(k)];
  double energy = 0.0;
  for_each_block(g, [&](int ga, int gb, int gc) {
    const extent_t nb = vir_n_[u(gb)], nc = vir_n_[u(gc)], base = block_off_[u(g)][u(ga)][u(gb)];
    const double* ec = ev_.data() + vir_off_[u(gc)];
    for (extent_t a = 0; a < vir_n_[u(ga)]; ++a)
      for (extent_t b = 0; b < nb; ++b) {
        const double d_ab = e_occ - ev_[u(vir_off_[u(ga)] + a)] - ev_[u(vir_off_[u(gb)] + b)];
        const extent_t at = base + (a * nb + b) * nc;
        for (extent_t c = 0; c < nc; ++c) energy += w[at + c] * z[at + c] / (d_ab - ec[c]);
      }
  });
  return distinct_orderings(i, j, k) * energy;
}

}  // namespace tilecc::kernels
