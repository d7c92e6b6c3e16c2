// The (T) kernels, made from block tensors, and the step that runs one step's tasks.
#include "tilecc/triples.hpp"

#include <nanobind/stl/vector.h>

#include <vector>

#include "bindings.hpp"
#include "tilecc/blas.hpp"
#include "tilecc/kernels/closed_shell_virtual_triples.hpp"
#include "tilecc/kernels/spin_orbital_triples.hpp"
#include "tilecc/runtime.hpp"

namespace nb = nanobind;

namespace tilecc::python {
namespace {

// Both closed-shell loops are made from the same tensors.
template <class Kernel>
void bind_closed_shell(nb::module_& m, const char* name) {
  nb::class_<Kernel, kernels::TriplesKernel>(m, name)
      .def(
          "__init__",
          [](Kernel* self, const BlockTensor& ovvv, const BlockTensor& ovoo,
             const BlockTensor& ovov, const BlockTensor& t2, const BlockTensor& t1,
             const BlockTensor& fov, const Runtime* runtime) {
            nb::gil_scoped_release release;
            new (self) Kernel({&ovvv, &ovoo, &ovov, &t2, &t1, &fov,
                               runtime != nullptr ? runtime->memory_budget() : nullptr});
          },
          nb::arg("ovvv"), nb::arg("ovoo"), nb::arg("ovov"), nb::arg("t2"), nb::arg("t1"),
          nb::arg("fov"), nb::arg("runtime").none() = nullptr,
          "The kernel over these tensors, its repacked inputs held against the runtime's "
          "memory budget (none: uncounted).")
      .def(nb::init<const IndexSpace&, const IndexSpace&>(), nb::arg("occupied"),
           nb::arg("virtual"), "The work alone (no energies), for these spaces.");
}

}  // namespace

void bind_triples(nb::module_& m) {
  nb::class_<kernels::TriplesKernel>(m, "TriplesKernel")
      .def_prop_ro("steps", &kernels::TriplesKernel::steps)
      .def_prop_ro("held_bytes", &kernels::TriplesKernel::held_bytes,
                   "Bytes of repacked inputs this process holds (a node's shared arrays count on "
                   "its first rank).")
      .def_prop_ro("scratch_doubles", &kernels::TriplesKernel::scratch_doubles,
                   "Doubles of scratch each worker holds while it runs the kernel's tasks.")
      .def_prop_ro("input_bytes", &kernels::TriplesKernel::input_bytes,
                   "Bytes of repacked inputs one node holds in all, known from the spaces alone.")
      .def_prop_ro("fetched_bytes", &kernels::TriplesKernel::fetched_bytes,
                   "Bytes this process got from the input slices other nodes hold.")
      .def_prop_ro("slice_doubles", &kernels::TriplesKernel::slice_doubles,
                   "Per occupied orbital, the doubles of its slices of the inputs the kernel "
                   "spreads over the nodes (empty: it spreads none).")
      .def(
          "task_orbitals",
          [](const kernels::TriplesKernel& kernel, extent_t step) {
            std::vector<std::vector<extent_t>> orbitals;
            for (extent_t t = 0; t < kernel.tasks(step); ++t)
              orbitals.push_back(kernel.task_orbitals(step, t));
            return orbitals;
          },
          nb::arg("step"), "The occupied orbitals whose slices each task of the step reads.")
      .def_prop_ro("scale", &kernels::TriplesKernel::scale)
      .def_prop_ro("executed_flops", &triples_flops,
                   "Flops the kernel's GEMMs execute over every triple the step runs.")
      .def(
          "task_costs",
          [](const kernels::TriplesKernel& kernel, extent_t step) {
            std::vector<double> costs;
            for (extent_t t = 0; t < kernel.tasks(step); ++t) costs.push_back(kernel.cost(step, t));
            return costs;
          },
          nb::arg("step"), "The scheduler's cost of each task of the step.")
      .def(
          "task_seconds",
          [](const kernels::TriplesKernel& kernel, extent_t step, const CostModel& model) {
            std::vector<double> seconds;
            for (extent_t t = 0; t < kernel.tasks(step); ++t)
              seconds.push_back(kernel.predicted_seconds(step, t, model));
            return seconds;
          },
          nb::arg("step"), nb::arg("model"),
          "Each task of the step's seconds on one worker, predicted by the cost model.")
      .def(
          "energy_for_step",
          [](const kernels::TriplesKernel& kernel, extent_t step, Runtime& runtime) {
            nb::gil_scoped_release release;
            blas::ensure_loaded();
            return triples_step(kernel, step, runtime.executor(), runtime.communicator());
          },
          nb::arg("step"), nb::arg("runtime"),
          "Sum of the kernel's weighted summands over the step's tasks, on the runtime's workers "
          "(and ranks).");

  bind_closed_shell<kernels::ClosedShellTriples>(m, "ClosedShellTriples");
  bind_closed_shell<kernels::ClosedShellVirtualTriples>(m, "ClosedShellVirtualTriples");

  nb::class_<kernels::SpinOrbitalTriples, kernels::TriplesKernel>(m, "SpinOrbitalTriples")
      .def(nb::init<const IndexSpace&, const IndexSpace&>(), nb::arg("occupied"),
           nb::arg("virtual"), "The work alone (no energies), for these spaces.")
      .def(
          "__init__",
          [](kernels::SpinOrbitalTriples* self, const BlockTensor& ovvv, const BlockTensor& ooov,
             const BlockTensor& oovv, const BlockTensor& t2, const BlockTensor& t1,
             const BlockTensor& fov, const Runtime* runtime) {
            nb::gil_scoped_release release;
            new (self) kernels::SpinOrbitalTriples(
                {&ovvv, &ooov, &oovv, &t2, &t1, &fov,
                 runtime != nullptr ? runtime->memory_budget() : nullptr});
          },
          nb::arg("ovvv"), nb::arg("ooov"), nb::arg("oovv"), nb::arg("t2"), nb::arg("t1"),
          nb::arg("fov"), nb::arg("runtime").none() = nullptr,
          "The kernel over these tensors, its repacked inputs held against the runtime's "
          "memory budget (none: uncounted).");
}

}  // namespace tilecc::python
