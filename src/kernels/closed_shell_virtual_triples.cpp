// The fused closed-shell (T) kernel over virtual triples. A task (a, b) takes the c <= b in chunks
// of one irrep: for each of the six orderings, two batched GEMMs give that ordering's connected
// part for the whole chunk, which is added into W with its occupied axes permuted; then, per c,
// X = W + the disconnected part, Z = the r3 transposes of X, and the sum of W Z / D.
#include "tilecc/kernels/closed_shell_virtual_triples.hpp"

#include <algorithm>

#include "permuted_sum.hpp"
#include "tilecc/blas.hpp"
#include "tilecc/error.hpp"
#include "triples_inputs.hpp"

namespace tilecc::kernels {
namespace {

using Perm = std::array<int, 3>;
// The orderings (x, y, z) = (v[p0], v[p1], v[p2]) of v = (a, b, c); (p, q, r) are the same
// ordering of (i, j, k).
constexpr std::array<Perm, 6> orderings = {
    {{0, 1, 2}, {1, 0, 2}, {0, 2, 1}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}};
// Z's terms: X read at the occupied axes (source axis s holds target axis order[s]) and weights.
constexpr std::array<Perm, 6> r3_orders = {
    {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}, {0, 2, 1}, {1, 0, 2}}};
constexpr std::array<double, 6> r3_weights = {4.0, 1.0, 1.0, -2.0, -2.0, -2.0};
// The connected part as six GEMMs per irrep: each term (f or m) of two orderings that share an
// operand (the amplitudes of f, the integrals of m), their other operands stacked.
struct Job {
  bool f_term;
  std::array<int, 2> pair;
};
constexpr std::array<Job, 6> jobs = {{{true, {0, 1}},
                                      {true, {2, 4}},
                                      {true, {3, 5}},
                                      {false, {0, 2}},
                                      {false, {1, 3}},
                                      {false, {4, 5}}}};
// A chunk's three arrays (W and one ordering's two parts) within this many doubles: in L2.
constexpr extent_t chunk_doubles = extent_t{1} << 17;
// Steps: at most this many, of at least this many tasks each.
constexpr extent_t most_steps = 64, tasks_per_step = 16;

std::size_t u(int g) { return static_cast<std::size_t>(g); }
std::size_t u(extent_t n) { return static_cast<std::size_t>(n); }

}  // namespace

// The layout, tasks and steps: everything but the inputs.
ClosedShellVirtualTriples::ClosedShellVirtualTriples(const IndexSpace& o, const IndexSpace& v) {
  no_ = o.size(), nv_ = v.size();
  const extent_t no = no_, nv = nv_;
  for (const Orbital& orbital : v.orbitals()) vir_irrep_.push_back(orbital.irrep);
  detail::irrep_ranges(o, occ_off_, occ_n_);
  detail::irrep_ranges(v, vir_off_, vir_n_);
  auto gv = [&](extent_t x) { return vir_irrep_[u(x)]; };

  for (int h = 0; h < irreps; ++h) {
    extent_t off = 0;
    for (int g1 = 0; g1 < irreps; ++g1) {
      pair_off_[u(h)][u(g1)] = off;
      off += occ_n_[u(g1)] * occ_n_[u(g1 ^ h)];
    }
    npairs_[u(h)] = off;
  }
  for (int g = 0; g < irreps; ++g) {
    extent_t off = 0;
    for (int g0 = 0; g0 < irreps; ++g0) {
      w_off_[u(g)][u(g0)] = off;
      off += occ_n_[u(g0)] * npairs_[u(g ^ g0)];
    }
    size_[u(g)] = off;
    for (int g0 = 0; g0 < irreps; ++g0)
      for (int g1 = 0; g1 < irreps; ++g1)
        if (occ_n_[u(g ^ g0 ^ g1)] > 0) rows_[u(g)] += occ_n_[u(g0)] * occ_n_[u(g1)];
    chunk_[u(g)] = std::max<extent_t>(1, chunk_doubles / std::max<extent_t>(1, 3 * off));
    stack_doubles_ = std::max(stack_doubles_, 2 * chunk_[u(g)] * no * std::max(no, nv));
  }

  for (int gy = 0; gy < irreps; ++gy) {
    extent_t off = 0;
    for (int gp = 0; gp < irreps; ++gp)
      for (int gc = 0; gc < irreps; ++gc) {
        gathered_off_[u(gy)][u(gp)][u(gc)] = off;
        off += occ_n_[u(gp)] * vir_n_[u(gc)] * vir_n_[u(gp ^ gc ^ gy)];
      }
    gathered_doubles_ = std::max(gathered_doubles_, off);
  }

  // The repacked inputs' layouts. (px|fy) per (x, irrep(p), y), [p][f].
  pxfy_off_.resize(u(nv * irreps * nv));
  for (extent_t x = 0; x < nv; ++x)
    for (int gp = 0; gp < irreps; ++gp)
      for (extent_t y = 0; y < nv; ++y) {
        pxfy_off_[u((x * irreps + gp) * nv + y)] = pxfy_doubles_;
        pxfy_doubles_ += occ_n_[u(gp)] * vir_n_[u(gp ^ gv(x) ^ gv(y))];
      }
  // t_rq^zf per (h, z): [(q, r) pairs of h][f].
  t2f_off_.resize(u(irreps * nv));
  for (int h = 0; h < irreps; ++h)
    for (extent_t z = 0; z < nv; ++z) {
      t2f_off_[u(h * nv + z)] = t2f_doubles_;
      t2f_doubles_ += npairs_[u(h)] * vir_n_[u(h ^ gv(z))];
    }
  // t_mr^yz as [r][m] per (y, irrep(r), z) and per (z, irrep(r), y).
  t2m_yz_off_.resize(u(nv * irreps * nv));
  t2m_zy_off_.resize(u(nv * irreps * nv));
  for (extent_t y = 0; y < nv; ++y)
    for (int gr = 0; gr < irreps; ++gr)
      for (extent_t z = 0; z < nv; ++z) {
        t2m_yz_off_[u((y * irreps + gr) * nv + z)] = t2m_doubles_;
        t2m_doubles_ += occ_n_[u(gr)] * occ_n_[u(gr ^ gv(y) ^ gv(z))];
      }
  extent_t total = 0;
  for (extent_t z = 0; z < nv; ++z)
    for (int gr = 0; gr < irreps; ++gr)
      for (extent_t y = 0; y < nv; ++y) {
        t2m_zy_off_[u((z * irreps + gr) * nv + y)] = total;
        total += occ_n_[u(gr)] * occ_n_[u(gr ^ gv(y) ^ gv(z))];
      }
  // (px|mq) per (h, x): [(p, q) pairs of h][m].
  ovoo_off_.resize(u(irreps * nv));
  for (int h = 0; h < irreps; ++h)
    for (extent_t x = 0; x < nv; ++x) {
      ovoo_off_[u(h * nv + x)] = ovoo_doubles_;
      ovoo_doubles_ += npairs_[u(h)] * occ_n_[u(h ^ gv(x))];
    }

  eo_ = detail::energies(o);
  ev_ = detail::energies(v);

  for (int ga = 0; ga < irreps; ++ga)
    for (int gb = 0; gb < irreps; ++gb)
      for (int gc = 0; gc < irreps; ++gc)
        triple_flops_[u(ga)][u(gb)][u(gc)] = triple_flops(ga, gb, gc);
  // Tasks (a, b), a >= b, cut into steps of about equal flops.
  std::vector<double> costs;
  double all = 0.0;
  for (extent_t a = 0; a < nv; ++a)
    for (extent_t b = 0; b <= a; ++b) {
      tasks_.push_back({a, b});
      double flops = 0.0;
      for (int gc = 0; gc < irreps; ++gc) {
        const extent_t below = std::clamp<extent_t>(b + 1 - vir_off_[u(gc)], 0, vir_n_[u(gc)]);
        flops += static_cast<double>(below) * triple_flops_[u(gv(a))][u(gv(b))][u(gc)];
      }
      costs.push_back(flops);
      all += flops;
    }
  const extent_t n = static_cast<extent_t>(tasks_.size());
  const extent_t steps = std::clamp<extent_t>(n / tasks_per_step, 1, most_steps);
  step_first_ = {0};
  double done = 0.0;
  for (extent_t t = 0; t + 1 < n; ++t) {
    done += costs[u(t)];
    const double boundary =
        all * static_cast<double>(step_first_.size()) / static_cast<double>(steps);
    if (all > 0.0 && done >= boundary) step_first_.push_back(t + 1);
  }
  step_first_.push_back(n);
}

ClosedShellVirtualTriples::ClosedShellVirtualTriples(const ClosedShellTriplesInputs& in)
    : ClosedShellVirtualTriples(detail::t1_space(in.t1, 0), detail::t1_space(in.t1, 1)) {
  in.check();
  const extent_t no = no_, nv = nv_, nv2 = nv * nv;
  std::vector<int> occ_irrep;
  for (const Orbital& orbital : in.t1->shape().space(0).orbitals())
    occ_irrep.push_back(orbital.irrep);
  auto gv = [&](extent_t x) { return vir_irrep_[u(x)]; };
  // The repacked inputs are held once per node: its first rank reads and writes them.
  const std::shared_ptr<Communicator> comm = detail::communicator_of(*in.t2);
  const bool writes = NodeShared::writes_on(comm.get());

  pxfy_ = NodeShared(u(pxfy_doubles_), comm, in.budget);
  if (writes)
    detail::for_each_first_tile(*in.ovvv, [&](extent_t p0, extent_t np, const double* slab) {
      for (extent_t p = p0; p < p0 + np; ++p) {
        const int gp = occ_irrep[u(p)];
        const extent_t pl = p - occ_off_[u(gp)];
        for (extent_t x = 0; x < nv; ++x)
          for (extent_t y = 0; y < nv; ++y) {
            const int gf = gp ^ gv(x) ^ gv(y);
            const extent_t nf = vir_n_[u(gf)], f0 = vir_off_[u(gf)];
            double* dst = pxfy_.data() + pxfy_off_[u((x * irreps + gp) * nv + y)] + pl * nf;
            const double* src = slab + ((p - p0) * nv + x) * nv2 + y;  // (px|fy) at [f * nv]
            for (extent_t f = 0; f < nf; ++f) dst[f] = src[(f0 + f) * nv];
          }
      }
    });
  const std::vector<double> t2 =
      writes ? read_dense(*in.t2) : std::vector<double>{};  // [i][j][a][b]
  auto amplitude = [&](extent_t i, extent_t j, extent_t a, extent_t b) {
    return t2[u(((i * no + j) * nv + a) * nv + b)];
  };
  t2f_ = NodeShared(u(t2f_doubles_), comm, in.budget);
  for (int h = 0; h < irreps && writes; ++h)
    for (extent_t z = 0; z < nv; ++z) {
      const int gf = h ^ gv(z);
      const extent_t nf = vir_n_[u(gf)], f0 = vir_off_[u(gf)];
      double* dst = t2f_.data() + t2f_off_[u(h * nv + z)];
      for (int gq = 0; gq < irreps; ++gq) {
        const int gr = h ^ gq;
        for (extent_t q = 0; q < occ_n_[u(gq)]; ++q)
          for (extent_t r = 0; r < occ_n_[u(gr)]; ++r) {
            double* row = dst + (pair_off_[u(h)][u(gq)] + q * occ_n_[u(gr)] + r) * nf;
            for (extent_t f = 0; f < nf; ++f)
              row[f] = amplitude(occ_off_[u(gr)] + r, occ_off_[u(gq)] + q, z, f0 + f);
          }
      }
    }
  t2m_yz_ = NodeShared(u(t2m_doubles_), comm, in.budget);
  t2m_zy_ = NodeShared(u(t2m_doubles_), comm, in.budget);
  for (extent_t y = 0; y < nv && writes; ++y)
    for (int gr = 0; gr < irreps; ++gr)
      for (extent_t z = 0; z < nv; ++z) {
        const int gm = gr ^ gv(y) ^ gv(z);
        const extent_t nr = occ_n_[u(gr)], nm = occ_n_[u(gm)];
        double* yz = t2m_yz_.data() + t2m_yz_off_[u((y * irreps + gr) * nv + z)];
        double* zy = t2m_zy_.data() + t2m_zy_off_[u((z * irreps + gr) * nv + y)];
        for (extent_t r = 0; r < nr; ++r)
          for (extent_t m = 0; m < nm; ++m)
            yz[r * nm + m] = zy[r * nm + m] =
                amplitude(occ_off_[u(gm)] + m, occ_off_[u(gr)] + r, y, z);
      }
  // (px|mq) per (h, x): [(p, q) pairs of h][m].
  {
    const std::vector<double> ovoo =
        writes ? read_dense(*in.ovoo) : std::vector<double>{};  // [p][x][m][q]
    ovoo_ = NodeShared(u(ovoo_doubles_), comm, in.budget);
    for (int h = 0; h < irreps && writes; ++h)
      for (extent_t x = 0; x < nv; ++x) {
        const int gm = h ^ gv(x);
        const extent_t nm = occ_n_[u(gm)], m0 = occ_off_[u(gm)];
        double* dst = ovoo_.data() + ovoo_off_[u(h * nv + x)];
        for (int gp = 0; gp < irreps; ++gp) {
          const int gq = h ^ gp;
          for (extent_t p = 0; p < occ_n_[u(gp)]; ++p)
            for (extent_t q = 0; q < occ_n_[u(gq)]; ++q) {
              double* row = dst + (pair_off_[u(h)][u(gp)] + p * occ_n_[u(gq)] + q) * nm;
              const extent_t pg = occ_off_[u(gp)] + p, qg = occ_off_[u(gq)] + q;
              for (extent_t m = 0; m < nm; ++m)
                row[m] = ovoo[u(((pg * nv + x) * no + m0 + m) * no + qg)];
            }
        }
      }
  }
  // (ia|jb) and t_ij^ab as [a][b][i][j]; t1 and f_ov as [a][i].
  {
    const std::vector<double> ovov =
        writes ? read_dense(*in.ovov) : std::vector<double>{};  // [i][a][j][b]
    ovov_ = NodeShared(u(nv2 * no * no), comm, in.budget);
    t2_ = NodeShared(u(nv2 * no * no), comm, in.budget);
    for (extent_t a = 0; a < nv && writes; ++a)
      for (extent_t b = 0; b < nv; ++b)
        for (extent_t i = 0; i < no; ++i)
          for (extent_t j = 0; j < no; ++j) {
            const extent_t at = ((a * nv + b) * no + i) * no + j;
            ovov_[u(at)] = ovov[u(((i * nv + a) * no + j) * nv + b)];
            t2_[u(at)] = amplitude(i, j, a, b);
          }
  }
  const std::vector<double> t1 = read_dense(*in.t1), fov = read_dense(*in.fov);
  t1_.resize(u(nv * no));
  fov_.resize(u(nv * no));
  for (extent_t i = 0; i < no; ++i)
    for (extent_t a = 0; a < nv; ++a) {
      t1_[u(a * no + i)] = t1[u(i * nv + a)];
      fov_[u(a * no + i)] = fov[u(i * nv + a)];
    }
  NodeShared::publish({&pxfy_, &t2f_, &t2m_yz_, &t2m_zy_, &ovoo_, &ovov_, &t2_});
  has_inputs_ = true;
}

std::int64_t ClosedShellVirtualTriples::input_bytes() const {
  return 8 * (pxfy_doubles_ + t2f_doubles_ + 2 * t2m_doubles_ + ovoo_doubles_ +
              2 * nv_ * nv_ * no_ * no_) +
         vector_bytes(no_, nv_);
}

std::int64_t ClosedShellVirtualTriples::held_bytes() const {
  return kernels::held_bytes({&t1_, &fov_, &eo_, &ev_},
                             {&pxfy_, &t2f_, &t2m_yz_, &t2m_zy_, &ovoo_, &ovov_, &t2_});
}

extent_t ClosedShellVirtualTriples::tasks(extent_t step) const {
  return step_first_[u(step + 1)] - step_first_[u(step)];
}

std::array<extent_t, 2> ClosedShellVirtualTriples::pair(extent_t step, extent_t task) const {
  TILECC_CHECK(step >= 0 && step < steps() && task >= 0 && task < tasks(step),
               "closed-shell (T): step ", step, " has no task ", task, ".");
  return tasks_[u(step_first_[u(step)] + task)];
}

extent_t ClosedShellVirtualTriples::scratch_doubles() const {
  extent_t chunk = 0, size = 0;
  for (int g = 0; g < irreps; ++g) {
    chunk = std::max(chunk, chunk_[u(g)] * size_[u(g)]);
    size = std::max(size, size_[u(g)]);
  }
  return 2 * gathered_doubles_ + 3 * chunk + 2 * size + stack_doubles_;
}

double ClosedShellVirtualTriples::triple_flops(int ga, int gb, int gc) const {
  const int g = ga ^ gb ^ gc;
  const std::array<int, 3> irrep = {ga, gb, gc};
  double flops = 0.0;
  for (const Perm& order : orderings) {
    const int gx = irrep[u(order[0])], gy = irrep[u(order[1])], gz = irrep[u(order[2])];
    for (int g0 = 0; g0 < irreps; ++g0) {
      const double rows = static_cast<double>(occ_n_[u(g0)] * npairs_[u(g ^ g0)]);
      flops += 2.0 * rows * static_cast<double>(vir_n_[u(g0 ^ gx ^ gy)]);  // f term, g0 of p
      flops += 2.0 * rows * static_cast<double>(occ_n_[u(g0 ^ gy ^ gz)]);  // m term, g0 of r
    }
  }
  return flops;
}

double ClosedShellVirtualTriples::flops(extent_t step, extent_t task) const {
  const auto ab = pair(step, task);
  const int ga = vir_irrep_[u(ab[0])], gb = vir_irrep_[u(ab[1])];
  double flops = 0.0;
  for (int gc = 0; gc < irreps; ++gc) {
    const extent_t below = std::clamp<extent_t>(ab[1] + 1 - vir_off_[u(gc)], 0, vir_n_[u(gc)]);
    flops += static_cast<double>(below) * triple_flops_[u(ga)][u(gb)][u(gc)];
  }
  return flops;
}

ClosedShellVirtualTriples::Slab ClosedShellVirtualTriples::stacked_slab(const double* data, int g,
                                                                        extent_t nc, int which,
                                                                        bool c_fastest) const {
  Slab slab{data, {}, {}, {}};
  for (int g0 = 0; g0 < irreps; ++g0) {
    const extent_t pairs = npairs_[u(g ^ g0)], rows = occ_n_[u(g0)];
    slab.base[u(g0)] = 2 * nc * w_off_[u(g)][u(g0)] + which * nc * rows * pairs;
    slab.row[u(g0)] = c_fastest ? nc * pairs : pairs;
    slab.step[u(g0)] = c_fastest ? pairs : rows * pairs;
  }
  return slab;
}

template <class Body>
void ClosedShellVirtualTriples::for_each_block(int g, Body&& body) const {
  for (int g0 = 0; g0 < irreps; ++g0)
    for (int g1 = 0; g1 < irreps; ++g1) {
      const int g2 = g ^ g0 ^ g1;
      if (occ_n_[u(g0)] > 0 && occ_n_[u(g1)] > 0 && occ_n_[u(g2)] > 0) body(g0, g1, g2);
    }
}

ClosedShellVirtualTriples::JobGemm ClosedShellVirtualTriples::job_gemm(
    bool f_term, int ordering, const std::array<int, 3>& irrep, int g0, extent_t nc) const {
  const Perm& order = orderings[u(ordering)];
  const int gx = irrep[u(order[0])], gy = irrep[u(order[1])], gz = irrep[u(order[2])];
  const auto runs = std::find(order.begin(), order.end(), 2) - order.begin();
  // f: [p][(q, r)] = sum_f (px|fy) t_rq^zf, g0 the irrep of p; m: [r][(p, q)] = -sum_m t_mr^yz
  // (px|mq), g0 the irrep of r. With c fastest, the chunk's c's are columns, else rows.
  const bool c_fastest = f_term ? runs == 2 : runs == 0;
  const extent_t rows = occ_n_[u(g0)], pairs = npairs_[u(irrep[0] ^ irrep[1] ^ irrep[2] ^ g0)];
  const extent_t inner = f_term ? vir_n_[u(g0 ^ gx ^ gy)] : occ_n_[u(g0 ^ gy ^ gz)];
  return {c_fastest, rows, pairs, 2 * (c_fastest ? 1 : nc) * rows, (c_fastest ? nc : 1) * pairs,
          inner};
}

double ClosedShellVirtualTriples::predicted_seconds(extent_t step, extent_t task,
                                                    const CostModel& model) const {
  const auto ab = pair(step, task);
  const extent_t a = ab[0], b = ab[1];
  const int ga = vir_irrep_[u(a)], gb = vir_irrep_[u(b)];
  auto pass = [&](extent_t elements, int strided, int in_order, extent_t runs) {
    return detail::pass_seconds(model, elements, strided, in_order, runs);
  };
  // The gather of (pc|fy), y = a and b, c <= b: one copy per (y, irrep(p), c).
  double seconds = 0.0;
  extent_t gathered = 0, blocks = 0;
  for (const int gy : {ga, gb})
    for (int gp = 0; gp < irreps; ++gp)
      for (int gc = 0; gc < irreps; ++gc) {
        const extent_t cs = std::clamp<extent_t>(b + 1 - vir_off_[u(gc)], 0, vir_n_[u(gc)]);
        gathered += cs * occ_n_[u(gp)] * vir_n_[u(gp ^ gc ^ gy)];
        blocks += cs;
      }
  seconds += pass(gathered, 0, 2, blocks);
  for (int gc = 0; gc < irreps; ++gc) {
    const int g = ga ^ gb ^ gc;
    const extent_t size = size_[u(g)], rows = rows_[u(g)];
    const extent_t end = std::min(vir_off_[u(gc)] + vir_n_[u(gc)], b + 1);
    if (size == 0) continue;
    for (extent_t c0 = vir_off_[u(gc)]; c0 < end; c0 += chunk_[u(g)]) {
      const extent_t nc = std::min(chunk_[u(g)], end - c0);
      seconds += pass(nc * size, 0, 1, 1);  // W zeroed
      for (const Job& job : jobs) {
        for (int g0 = 0; g0 < irreps; ++g0) {
          const JobGemm shape = job_gemm(job.f_term, job.pair[0], {ga, gb, gc}, g0, nc);
          if (shape.rows == 0 || shape.pairs == 0) continue;
          if (shape.k == 0) {
            seconds += pass(shape.m * shape.n, 0, 1, 1);
            continue;
          }
          seconds += pass(shape.m * shape.k, 0, 2, 2) +  // the two orderings' operands stacked
                     model.gemm_seconds(shape.m, shape.n, shape.k);
        }
        seconds += pass(nc * size, 2, 2, nc * rows);  // both added into W, read and written
      }
      // Per c: X (W and six disconnected streams read, X written), Z (six transposed reads of X,
      // Z written), the weighted sum (W and Z read).
      seconds += static_cast<double>(nc) *
                 (pass(size, 0, 8, rows) + pass(size, 6, 1, rows) + pass(size, 0, 2, rows));
    }
  }
  return seconds;
}

std::array<ClosedShellVirtualTriples::Slab, 2> ClosedShellVirtualTriples::connected(
    const std::array<extent_t, 3>& abc, const Chunk& chunk, bool f_term,
    const std::array<int, 2>& pair, const double* gathered_a, const double* gathered_b,
    double* stack, double* out) const {
  const extent_t nv = nv_, nc = chunk.n;
  const std::array<int, 3> irrep = {vir_irrep_[u(abc[0])], vir_irrep_[u(abc[1])], chunk.gc};
  const int g = irrep[0] ^ irrep[1] ^ irrep[2];
  struct Ordering {
    extent_t x, y, z;
    int gx, gy, gz, runs;  // runs: which of x, y, z runs over the chunk (abc[2] is its first c)
  };
  std::array<Ordering, 2> o{};
  for (std::size_t n = 0; n < 2; ++n) {
    const Perm& order = orderings[u(pair[n])];
    o[n] = {abc[u(order[0])],
            abc[u(order[1])],
            abc[u(order[2])],
            irrep[u(order[0])],
            irrep[u(order[1])],
            irrep[u(order[2])],
            static_cast<int>(std::find(order.begin(), order.end(), 2) - order.begin())};
  }
  const bool c_fastest = job_gemm(f_term, pair[0], irrep, 0, nc).c_fastest;

  for (int g0 = 0; g0 < irreps; ++g0) {
    const int h = g ^ g0;
    const JobGemm shape = job_gemm(f_term, pair[0], irrep, g0, nc);
    const extent_t rows = shape.rows, pairs = shape.pairs, inner = shape.k;
    double* dst = out + 2 * nc * w_off_[u(g)][u(g0)];
    if (rows == 0 || pairs == 0) continue;
    if (inner == 0) {
      std::fill_n(dst, 2 * nc * rows * pairs, 0.0);
      continue;
    }
    const extent_t block = shape.m / 2 * inner;
    for (std::size_t n = 0; n < 2; ++n) {
      const Ordering& s = o[n];
      const double* a;
      if (f_term)
        a = s.runs == 0 ? (s.y == abc[0] ? gathered_a : gathered_b) +
                              gathered_off_[u(s.gy)][u(g0)][u(chunk.gc)] +
                              (s.x - vir_off_[u(chunk.gc)]) * rows * inner
                        : pxfy_.data() + pxfy_off_[u((s.x * irreps + g0) * nv + s.y)];
      else
        a = s.runs == 1 ? t2m_zy_.data() + t2m_zy_off_[u((s.z * irreps + g0) * nv + s.y)]
                        : t2m_yz_.data() + t2m_yz_off_[u((s.y * irreps + g0) * nv + s.z)];
      std::copy_n(a, block, stack + static_cast<extent_t>(n) * block);
    }
    const Ordering& s = o[0];
    const double* b = f_term ? t2f_.data() + t2f_off_[u(h * nv + s.z)]
                             : ovoo_.data() + ovoo_off_[u(h * nv + s.x)];
    blas::gemm(false, true, shape.m, shape.n, inner, f_term ? 1.0 : -1.0, stack, inner, b, inner,
               0.0, dst, shape.n);
  }
  return {stacked_slab(out, g, nc, 0, c_fastest), stacked_slab(out, g, nc, 1, c_fastest)};
}

namespace {

// Where element (i, j, k) of a target block (irreps t) of symmetry g sits in a slab's chunk
// position cl, whose source axis s holds target axis axes[s].
template <class Slab, class Sizes, class Pairs>
detail::SourceView source_view(const Slab& slab, extent_t cl, const Perm& axes,
                               const std::array<int, 3>& t, int g, const Sizes& occ_n,
                               const Pairs& pair_off, double weight) {
  const int g0 = t[u(axes[0])], g1 = t[u(axes[1])], g2 = t[u(axes[2])];
  std::array<extent_t, 3> stride{};
  stride[u(axes[0])] = slab.row[u(g0)];
  stride[u(axes[1])] = occ_n[u(g2)];
  stride[u(axes[2])] = 1;
  const double* base =
      slab.data + slab.base[u(g0)] + cl * slab.step[u(g0)] + pair_off[u(g ^ g0)][u(g1)];
  return {base, stride[0], stride[1], stride[2], weight};
}

}  // namespace

void ClosedShellVirtualTriples::add_disconnected(int g, const std::array<extent_t, 3>& abc,
                                                 const double* w, double* x) const {
  const extent_t no = no_, nv = nv_, a = abc[0], b = abc[1], c = abc[2];
  auto pair_rows = [&](const NodeShared& t, extent_t p, extent_t q) {
    return t.data() + (p * nv + q) * no * no;
  };
  const double *u_ab = pair_rows(ovov_, a, b), *t_ab = pair_rows(t2_, a, b);
  const double *u_ac = pair_rows(ovov_, a, c), *t_ac = pair_rows(t2_, a, c);
  const double *u_bc = pair_rows(ovov_, b, c), *t_bc = pair_rows(t2_, b, c);
  const double *t1_c = t1_.data() + c * no, *f_c = fov_.data() + c * no;
  for_each_block(g, [&](int g0, int g1, int g2) {
    const extent_t n1 = occ_n_[u(g1)], n2 = occ_n_[u(g2)], k0 = occ_off_[u(g2)];
    const extent_t base = w_off_[u(g)][u(g0)] + pair_off_[u(g ^ g0)][u(g1)];
    for (extent_t il = 0; il < occ_n_[u(g0)]; ++il)
      for (extent_t jl = 0; jl < n1; ++jl) {
        const extent_t i = occ_off_[u(g0)] + il, j = occ_off_[u(g1)] + jl;
        const extent_t at = base + il * npairs_[u(g ^ g0)] + jl * n2;
        const double alpha_ij = u_ab[i * no + j], beta_ij = t_ab[i * no + j];
        const double alpha_j = t1_[u(b * no + j)], beta_j = fov_[u(b * no + j)];
        const double alpha_i = t1_[u(a * no + i)], beta_i = fov_[u(a * no + i)];
        const double *u_ik = u_ac + i * no + k0, *t_ik = t_ac + i * no + k0;
        const double *u_jk = u_bc + j * no + k0, *t_jk = t_bc + j * no + k0;
        for (extent_t kl = 0; kl < n2; ++kl)
          x[at + kl] = w[at + kl] + alpha_ij * t1_c[k0 + kl] + beta_ij * f_c[k0 + kl] +
                       alpha_j * u_ik[kl] + beta_j * t_ik[kl] + alpha_i * u_jk[kl] +
                       beta_i * t_jk[kl];
      }
  });
}

double ClosedShellVirtualTriples::weighted_sum(int g, const std::array<extent_t, 3>& abc,
                                               const double* w, const double* z) const {
  const double e_vir = ev_[u(abc[0])] + ev_[u(abc[1])] + ev_[u(abc[2])];
  double sum = 0.0;
  for_each_block(g, [&](int g0, int g1, int g2) {
    const extent_t n1 = occ_n_[u(g1)], n2 = occ_n_[u(g2)];
    const double* ek = eo_.data() + occ_off_[u(g2)];
    const extent_t base = w_off_[u(g)][u(g0)] + pair_off_[u(g ^ g0)][u(g1)];
    for (extent_t il = 0; il < occ_n_[u(g0)]; ++il)
      for (extent_t jl = 0; jl < n1; ++jl) {
        const double d_ij = eo_[u(occ_off_[u(g0)] + il)] + eo_[u(occ_off_[u(g1)] + jl)] - e_vir;
        const extent_t at = base + il * npairs_[u(g ^ g0)] + jl * n2;
        for (extent_t kl = 0; kl < n2; ++kl) sum += w[at + kl] * z[at + kl] / (d_ij + ek[kl]);
      }
  });
  return sum;
}

double ClosedShellVirtualTriples::energy(extent_t step, extent_t task, double* scratch,
                                         int /*worker: nothing kept per worker*/) const {
  detail::check_inputs(has_inputs_, "closed-shell");
  const auto ab = pair(step, task);
  const extent_t a = ab[0], b = ab[1];
  const int ga = vir_irrep_[u(a)], gb = vir_irrep_[u(b)];
  extent_t chunk_max = 0, size_max = 0;
  for (int g = 0; g < irreps; ++g) {
    chunk_max = std::max(chunk_max, chunk_[u(g)] * size_[u(g)]);
    size_max = std::max(size_max, size_[u(g)]);
  }
  double* gathered_a = scratch;
  double* gathered_b = scratch + gathered_doubles_;
  double* w = scratch + 2 * gathered_doubles_;
  double* terms = w + chunk_max;
  double* x = terms + 2 * chunk_max;
  double* z = x + size_max;
  double* stack = z + size_max;

  // (pc|fy) for y = a and y = b and every c <= b, stacked over c: the operand of the orderings
  // whose x runs over a chunk.
  for (const auto& [y, out] : {std::pair{a, gathered_a}, std::pair{b, gathered_b}})
    for (int gp = 0; gp < irreps; ++gp)
      for (extent_t c = 0; c <= b; ++c) {
        const int gc = vir_irrep_[u(c)];
        const extent_t size = occ_n_[u(gp)] * vir_n_[u(gp ^ gc ^ vir_irrep_[u(y)])];
        const double* src = pxfy_.data() + pxfy_off_[u((c * irreps + gp) * nv_ + y)];
        std::copy_n(
            src, size,
            out + gathered_off_[u(vir_irrep_[u(y)])][u(gp)][u(gc)] + (c - vir_off_[u(gc)]) * size);
      }

  double energy = 0.0;
  for (int gc = 0; gc < irreps; ++gc) {
    const int g = ga ^ gb ^ gc;
    const extent_t size = size_[u(g)];
    const extent_t end = std::min(vir_off_[u(gc)] + vir_n_[u(gc)], b + 1);
    if (size == 0) continue;
    for (extent_t c0 = vir_off_[u(gc)]; c0 < end; c0 += chunk_[u(g)]) {
      const Chunk chunk{c0, std::min(chunk_[u(g)], end - c0), gc};
      const std::array<extent_t, 3> abc = {a, b, c0};
      std::fill_n(w, chunk.n * size, 0.0);
      for (const Job& job : jobs) {
        const std::array<Slab, 2> slabs =
            connected(abc, chunk, job.f_term, job.pair, gathered_a, gathered_b, stack, terms);
        std::array<Perm, 2> axes{};
        for (std::size_t n = 0; n < 2; ++n) {
          const Perm& order = orderings[u(job.pair[n])];
          axes[n] = job.f_term ? order : Perm{order[2], order[0], order[1]};
        }
        for (extent_t cl = 0; cl < chunk.n; ++cl)
          for_each_block(g, [&](int g0, int g1, int g2) {
            const std::array<int, 3> t = {g0, g1, g2};
            const std::array<detail::SourceView, 2> sources = {
                source_view(slabs[0], cl, axes[0], t, g, occ_n_, pair_off_, 1.0),
                source_view(slabs[1], cl, axes[1], t, g, occ_n_, pair_off_, 1.0)};
            detail::permuted_block_sum<2, true>(
                w + cl * size + w_off_[u(g)][u(g0)] + pair_off_[u(g ^ g0)][u(g1)],
                npairs_[u(g ^ g0)], occ_n_[u(g0)], occ_n_[u(g1)], occ_n_[u(g2)], sources);
          });
      }
      for (extent_t cl = 0; cl < chunk.n; ++cl) {
        const extent_t c = c0 + cl;
        const double* wc = w + cl * size;
        add_disconnected(g, {a, b, c}, wc, x);
        Slab x_slab{x, {}, {}, {}};
        for (int g0 = 0; g0 < irreps; ++g0) {
          x_slab.base[u(g0)] = w_off_[u(g)][u(g0)];
          x_slab.row[u(g0)] = npairs_[u(g ^ g0)];
        }
        for_each_block(g, [&](int g0, int g1, int g2) {
          const std::array<int, 3> t = {g0, g1, g2};
          std::array<detail::SourceView, 6> sources{};
          for (std::size_t n = 0; n < 6; ++n)
            sources[n] =
                source_view(x_slab, 0, r3_orders[n], t, g, occ_n_, pair_off_, r3_weights[n]);
          detail::permuted_block_sum(z + w_off_[u(g)][u(g0)] + pair_off_[u(g ^ g0)][u(g1)],
                                     npairs_[u(g ^ g0)], occ_n_[u(g0)], occ_n_[u(g1)],
                                     occ_n_[u(g2)], sources);
        });
        energy += distinct_orderings(a, b, c) * weighted_sum(g, {a, b, c}, wc, z);
      }
    }
  }
  return energy;
}

}  // namespace tilecc::kernels
