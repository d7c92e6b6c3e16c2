#include "tilecc/triples.hpp"

#include <utility>
#include <vector>

#include "tilecc/distributed.hpp"
#include "tilecc/error.hpp"

namespace tilecc {
namespace {

// The (j, k) of the triples computed for this i: i <= j <= k, or i < j < k where the summand
// vanishes when two indices coincide.
std::vector<std::pair<extent_t, extent_t>> pairs_for(const kernels::TriplesKernel& kernel,
                                                     extent_t i) {
  const extent_t no = kernel.occupied(), step = kernel.antisymmetric() ? 1 : 0;
  std::vector<std::pair<extent_t, extent_t>> pairs;
  for (extent_t j = i + step; j < no; ++j)
    for (extent_t k = j + step; k < no; ++k) pairs.emplace_back(j, k);
  return pairs;
}

}  // namespace

double triples_for_i(const kernels::TriplesKernel& kernel, extent_t i, Executor& executor,
                     const Communicator* comm) {
  const extent_t no = kernel.occupied();
  TILECC_CHECK(i >= 0 && i < no, "(T): the first occupied index must lie in [0, ", no, "), got ", i,
               ".");
  const std::vector<std::pair<extent_t, extent_t>> pairs = pairs_for(kernel, i);
  std::vector<double> costs;
  for (const auto& [j, k] : pairs) costs.push_back(static_cast<double>(kernel.elements(i, j, k)));
  std::vector<double> partial(static_cast<std::size_t>(executor.threads()), 0.0);
  const Executor::Body body = [&](task_id_t t, int worker) {
    const auto [j, k] = pairs[static_cast<std::size_t>(t)];
    const double weight = (i == j && j == k) ? 1.0 : (i == j || j == k) ? 3.0 : 6.0;
    double* scratch = executor.workspace(worker).a.get(kernel.scratch_doubles());
    partial[static_cast<std::size_t>(worker)] += weight * kernel.energy(i, j, k, scratch);
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
  for (extent_t i = 0; i < kernel.occupied(); ++i)
    for (const auto& [j, k] : pairs_for(kernel, i)) flops += kernel.flops(i, j, k);
  return flops;
}

}  // namespace tilecc
