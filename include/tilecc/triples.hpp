#pragma once
/** @file The closed-shell (T) step as tasks: the kernel (kernels/triples.hpp) computes one
 * occupied triple; this schedules the triples on the executor's workers. */
#include "tilecc/exec.hpp"
#include "tilecc/kernels/triples.hpp"

namespace tilecc {

/**
 * Sum over j, k of kernel.energy(i, j, k): the triples i <= j <= k, each weighted by its number
 * of orderings, run as tasks on the executor's workers, costed by their stored elements.
 *
 * @code
 *   double total = 0;
 *   for (extent_t i = 0; i < kernel.occupied(); ++i) total += triples_for_i(kernel, i, executor);
 *   const double e_t = 2.0 / 6.0 * total;
 * @endcode
 */
double triples_for_i(const kernels::ClosedShellTriples& kernel, extent_t i, Executor& executor);

}  // namespace tilecc
