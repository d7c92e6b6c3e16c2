// The fused closed-shell (T) kernel for one occupied triple. Per ordering s of (i,j,k) two GEMMs
// give that ordering's W0_s[a,b,c]; one cache-blocked pass sums the six (transposed) W0_s and
// the cheap V terms into W and X; a second blocked pass reduces W r3(X) / D. Blocking keeps the
// six transposed reads of each pass within a few cache-sized tiles.
#include "tilecc/kernels/triples.hpp"

#include <algorithm>
#include <array>

#include "tilecc/blas.hpp"

namespace tilecc::kernels {
namespace {

using Perm = std::array<int, 3>;
constexpr std::array<Perm, 6> orderings = {
    {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}};
constexpr extent_t tile = 8;

// Position in a [nv][nv][nv] array of the element that axis-permutation `axes` brings to (a,b,c):
// out[x] = in[y] with y[axes[t]] = x[t].
inline extent_t permuted(const Perm& axes, extent_t a, extent_t b, extent_t c, extent_t nv) {
  extent_t y[3];
  y[axes[0]] = a;
  y[axes[1]] = b;
  y[axes[2]] = c;
  return (y[0] * nv + y[1]) * nv + y[2];
}

Perm inverse(const Perm& p) {
  Perm inv{};
  for (int t = 0; t < 3; ++t) inv[static_cast<std::size_t>(p[static_cast<std::size_t>(t)])] = t;
  return inv;
}

template <class Body>
void blocked(extent_t nv, Body&& body) {
  for (extent_t a0 = 0; a0 < nv; a0 += tile)
    for (extent_t b0 = 0; b0 < nv; b0 += tile)
      for (extent_t c0 = 0; c0 < nv; c0 += tile)
        for (extent_t a = a0; a < std::min(nv, a0 + tile); ++a)
          for (extent_t b = b0; b < std::min(nv, b0 + tile); ++b)
            for (extent_t c = c0; c < std::min(nv, c0 + tile); ++c) body(a, b, c);
}

}  // namespace

double closed_shell_triples_ijk(const TriplesInputs& in, extent_t i, extent_t j, extent_t k,
                                double* scratch) {
  const extent_t no = in.no, nv = in.nv, nv2 = nv * nv, nv3 = nv2 * nv;
  const extent_t occ[3] = {i, j, k};
  double* w0[6];
  for (int s = 0; s < 6; ++s) w0[s] = scratch + s * nv3;
  double* w = scratch + 6 * nv3;
  double* x = scratch + 7 * nv3;
  for (std::size_t s = 0; s < 6; ++s) {
    const Perm& order = orderings[s];
    const extent_t p = occ[order[0]], q = occ[order[1]], r = occ[order[2]];
    // sum_f (pa|fb) t_rq^cf: [ab, f] x [c, f]^T
    blas::gemm(false, true, nv2, nv, nv, 1.0, in.iabf + p * nv3, nv, in.t2 + (r * no + q) * nv2, nv,
               0.0, w0[s], nv);
    // - sum_m (pa|mq) t_mr^bc: [a, m] (stride no*no) x [m, bc] (stride no*nv2)
    blas::gemm(false, false, nv, nv2, no, -1.0, in.iajm + (p * nv * no + q) * no, no * no,
               in.t2 + r * nv2, no * nv2, 1.0, w0[s], nv2);
  }
  // W and X = W + V/2, with V_s = (pa|qb) t_rc + f_rc t_pq^ab in the ordering's own axes.
  blocked(nv, [&](extent_t a, extent_t b, extent_t c) {
    const extent_t at = (a * nv + b) * nv + c;
    const extent_t abc[3] = {a, b, c};
    double ws = 0.0, vs = 0.0;
    for (std::size_t s = 0; s < 6; ++s) {
      const Perm& order = orderings[s];
      // Element of ordering s that lands on block (a,b,c): its axes are (a,b,c) reordered.
      const extent_t ya = abc[order[0]], yb = abc[order[1]], yc = abc[order[2]];
      ws += w0[s][(ya * nv + yb) * nv + yc];
      const extent_t p = occ[order[0]], q = occ[order[1]], r = occ[order[2]];
      vs += in.ovov[((p * nv + ya) * no + q) * nv + yb] * in.t1[r * nv + yc] +
            in.fov[r * nv + yc] * in.t2[(p * no + q) * nv2 + ya * nv + yb];
    }
    w[at] = ws;
    x[at] = ws + 0.5 * vs;
  });
  // r3 over (i,j,k) as (a,b,c) transposes of X: X_jki = X with (a,b,c) permuted by (1,2,0)^-1...
  constexpr std::array<Perm, 5> r3_orders = {
      {{1, 2, 0}, {2, 0, 1}, {2, 1, 0}, {0, 2, 1}, {1, 0, 2}}};
  constexpr double r3_weights[5] = {1.0, 1.0, -2.0, -2.0, -2.0};
  std::array<Perm, 5> r3_axes{};
  for (std::size_t n = 0; n < 5; ++n) r3_axes[n] = inverse(r3_orders[n]);
  const double e_occ = in.eo[i] + in.eo[j] + in.eo[k];
  double energy = 0.0;
  blocked(nv, [&](extent_t a, extent_t b, extent_t c) {
    const extent_t at = (a * nv + b) * nv + c;
    double z = 4.0 * x[at];
    for (std::size_t n = 0; n < 5; ++n) z += r3_weights[n] * x[permuted(r3_axes[n], a, b, c, nv)];
    energy += w[at] * z / (e_occ - in.ev[a] - in.ev[b] - in.ev[c]);
  });
  return energy;
}

}  // namespace tilecc::kernels
