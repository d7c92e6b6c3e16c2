// The (T) kernels, made from block tensors, and the step that runs one occupied index's triples.
#include "tilecc/triples.hpp"

#include "bindings.hpp"
#include "tilecc/blas.hpp"
#include "tilecc/kernels/closed_shell_triples.hpp"
#include "tilecc/kernels/spin_orbital_triples.hpp"
#include "tilecc/runtime.hpp"

namespace nb = nanobind;

namespace tilecc::python {

void bind_triples(nb::module_& m) {
  nb::class_<kernels::TriplesKernel>(m, "TriplesKernel")
      .def_prop_ro("occupied", &kernels::TriplesKernel::occupied)
      .def_prop_ro("scale", &kernels::TriplesKernel::scale)
      .def_prop_ro("executed_flops", &triples_flops,
                   "Flops the kernel's GEMMs execute over every triple the step runs.")
      .def(
          "energy_for_i",
          [](const kernels::TriplesKernel& kernel, extent_t i, Runtime& runtime) {
            nb::gil_scoped_release release;
            blas::ensure_loaded();
            return triples_for_i(kernel, i, runtime.executor(), runtime.communicator());
          },
          nb::arg("i"), nb::arg("runtime"),
          "Sum of the kernel's summand over the triples (i, j, k), all j and k, on the runtime's "
          "workers (and ranks).");

  nb::class_<kernels::ClosedShellTriples, kernels::TriplesKernel>(m, "ClosedShellTriples")
      .def(
          "__init__",
          [](kernels::ClosedShellTriples* self, const BlockTensor& ovvv, const BlockTensor& ovoo,
             const BlockTensor& ovov, const BlockTensor& t2, const BlockTensor& t1,
             const BlockTensor& fov) {
            nb::gil_scoped_release release;
            new (self) kernels::ClosedShellTriples({&ovvv, &ovoo, &ovov, &t2, &t1, &fov});
          },
          nb::arg("ovvv"), nb::arg("ovoo"), nb::arg("ovov"), nb::arg("t2"), nb::arg("t1"),
          nb::arg("fov"));

  nb::class_<kernels::SpinOrbitalTriples, kernels::TriplesKernel>(m, "SpinOrbitalTriples")
      .def(
          "__init__",
          [](kernels::SpinOrbitalTriples* self, const BlockTensor& ovvv, const BlockTensor& ooov,
             const BlockTensor& oovv, const BlockTensor& t2, const BlockTensor& t1,
             const BlockTensor& fov) {
            nb::gil_scoped_release release;
            new (self) kernels::SpinOrbitalTriples({&ovvv, &ooov, &oovv, &t2, &t1, &fov});
          },
          nb::arg("ovvv"), nb::arg("ooov"), nb::arg("oovv"), nb::arg("t2"), nb::arg("t1"),
          nb::arg("fov"));
}

}  // namespace tilecc::python
