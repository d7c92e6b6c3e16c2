#pragma once
/** @file The (T) step as tasks: a kernel (kernels/triples.hpp) divides the (T) sum into steps of
 * tasks; this runs one step's tasks on the executor's workers (and ranks). */
#include "tilecc/comm.hpp"
#include "tilecc/exec.hpp"
#include "tilecc/kernels/triples.hpp"

namespace tilecc {

/**
 * Sum of kernel.energy(step, task) over the step's tasks, run on the executor's workers, costed
 * by kernel.cost(). With a communicator of several ranks (every rank calls it), each rank runs
 * its share of the tasks (rank_share) and every rank gets the sum over all of them.
 *
 * @code
 *   double total = 0;
 *   for (extent_t s = 0; s < kernel.steps(); ++s) total += triples_step(kernel, s, executor);
 *   const double e_t = kernel.scale() * total;
 * @endcode
 */
double triples_step(const kernels::TriplesKernel& kernel, extent_t step, Executor& executor,
                    const Communicator* comm = nullptr);

/** The flops the kernel's GEMMs execute over every task of every step. */
double triples_flops(const kernels::TriplesKernel& kernel);

}  // namespace tilecc
