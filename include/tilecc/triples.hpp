#pragma once
/** @file The (T) step as tasks: a kernel (kernels/triples.hpp) computes one occupied triple; this
 * schedules the triples on the executor's workers. */
#include "tilecc/comm.hpp"
#include "tilecc/exec.hpp"
#include "tilecc/kernels/triples.hpp"

namespace tilecc {

/**
 * Sum over j, k of kernel.energy(i, j, k) for the triples the kernel asks for (i <= j <= k, each
 * weighted by its number of orderings; i < j < k only where the summand vanishes when two
 * coincide), run as tasks
 * on the executor's workers, costed by their stored elements. With a communicator of several
 * ranks (every rank calls it), each rank runs its share of the triples (rank_share) and every
 * rank gets the sum over all of them.
 *
 * @code
 *   double total = 0;
 *   for (extent_t i = 0; i < kernel.occupied(); ++i) total += triples_for_i(kernel, i, executor);
 *   const double e_t = kernel.scale() * total;
 * @endcode
 */
double triples_for_i(const kernels::TriplesKernel& kernel, extent_t i, Executor& executor,
                     const Communicator* comm = nullptr);

/** The flops the kernel's GEMMs execute over every triple triples_for_i runs. */
double triples_flops(const kernels::TriplesKernel& kernel);

}  // namespace tilecc
