#pragma once
/** @file The closed-shell (T) energy of one occupied triple (i, j, k), fused.
 *
 * Kernel contract:
 *  - Computes sum_abc W_abc r3(X)_abc / D_abc for the given (i, j, k), where, with S the sum over
 *    the six simultaneous orderings of (i,j,k) and (a,b,c),
 *      W = S[ sum_f (ia|fb) t_kj^cf - sum_m (ia|mj) t_mk^bc ],  X = W + S[ (ia|jb) t_kc + f_kc
 * t_ij^ab ]/2, r3(X)_ijk = 4 X_ijk + X_jki + X_kij - 2 X_kji - 2 X_ikj - 2 X_jik (as (a,b,c)
 * transposes), D = e_i + e_j + e_k - e_a - e_b - e_c. The (T) energy is 2/6 of the sum of this over
 * all (i, j, k).
 *  - Layouts (row-major, dense): iabf [no][nv][nv][nv] = (ia|fb); iajm [no][nv][no][no] = (ia|mj);
 *    t2 [no][no][nv][nv]; t1, fov [no][nv]; ovov [no][nv][no][nv] = (ia|jb); eo [no], ev [nv].
 *  - scratch holds at least 8 * nv^3 doubles. Thread safety: only scratch is written.
 */
#include "tilecc/types.hpp"

namespace tilecc::kernels {

struct TriplesInputs {
  extent_t no = 0, nv = 0;
  const double* iabf = nullptr;
  const double* iajm = nullptr;
  const double* t2 = nullptr;
  const double* t1 = nullptr;
  const double* fov = nullptr;
  const double* ovov = nullptr;
  const double* eo = nullptr;
  const double* ev = nullptr;
};

double closed_shell_triples_ijk(const TriplesInputs& in, extent_t i, extent_t j, extent_t k,
                                double* scratch);

}  // namespace tilecc::kernels
