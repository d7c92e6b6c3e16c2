#pragma once
/** @file The BLAS tilecc calls, loaded at run time.
 *
 * tilecc does not link a BLAS: it loads one shared library by path (Python passes the one from
 * the `scipy-openblas32` package; `TILECC_BLAS_LIBRARY` overrides it), so that the BLAS can be
 * chosen and measured without rebuilding. Before loading an OpenBLAS it picks the kernel set from
 * the CPU's features: OpenBLAS's own detection has been seen to fall back to AVX2 or generic
 * kernels on AVX-512 CPUs it does not know (AMD Zen 4/5), at half the DGEMM speed; a user's own
 * OPENBLAS_CORETYPE is always respected.
 */
#include <string>

#include "tilecc/types.hpp"

namespace tilecc::blas {

struct Info {
  std::string library;      ///< path loaded
  std::string vendor;       ///< "OpenBLAS", "MKL", or "BLAS"
  std::string core;         ///< kernel set in use (OpenBLAS core name), if the library tells
  std::string config;       ///< the library's own configuration string, if it has one
  std::string core_choice;  ///< how the kernel set was chosen
};

/** Load the BLAS at `path` (once per process; loading another path afterwards is an error). */
void load(const std::string& path);
bool loaded();
/** Loads $TILECC_BLAS_LIBRARY if nothing was loaded yet; throws a clear error if it is unset. */
void ensure_loaded();
const Info& info();

/** Row-major C = alpha * op(A) op(B) + beta * C with op(A) m x k, op(B) k x n. */
void gemm(bool trans_a, bool trans_b, extent_t m, extent_t n, extent_t k, double alpha,
          const double* a, extent_t lda, const double* b, extent_t ldb, double beta, double* c,
          extent_t ldc);

/** Threads the BLAS itself may use inside one call (tilecc sets 1 while its workers run). */
void set_threads(int n);

/** The SIMD features of this CPU that matter for the kernels ("avx512f avx2 fma"). */
std::string cpu_features();

}  // namespace tilecc::blas
