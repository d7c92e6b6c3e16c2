#include "tilecc/triples.hpp"

#include <vector>

#include "tilecc/distributed.hpp"
#include "tilecc/error.hpp"

namespace tilecc {

double triples_step(const kernels::TriplesKernel& kernel, extent_t step, Executor& executor,
                    const Communicator* comm) {
  TILECC_CHECK(step >= 0 && step < kernel.steps(), "(T): the step must lie in [0, ", kernel.steps(),
               "), got ", step, ".");
  std::vector<double> costs;
  for (extent_t t = 0; t < kernel.tasks(step); ++t) costs.push_back(kernel.cost(step, t));
  std::vector<double> partial(static_cast<std::size_t>(executor.threads()), 0.0);
  const Executor::Body body = [&](task_id_t t, int worker) {
    double* scratch = executor.workspace(worker).a.get(kernel.scratch_doubles());
    partial[static_cast<std::size_t>(worker)] += kernel.energy(step, t, scratch, worker);
  };
  const bool distributed = comm != nullptr && comm->size() > 1;
  if (distributed)
    run_across_ranks(executor, {costs}, body, *comm);
  else
    executor.run({costs}, body);
  double sum = 0.0;
  for (const double p : partial) sum += p;
  return distributed ? comm->sum(sum) : sum;
}

double triples_flops(const kernels::TriplesKernel& kernel) {
  double flops = 0.0;
  for (extent_t s = 0; s < kernel.steps(); ++s)
    for (extent_t t = 0; t < kernel.tasks(s); ++t) flops += kernel.flops(s, t);
  return flops;
}

}  // namespace tilecc
