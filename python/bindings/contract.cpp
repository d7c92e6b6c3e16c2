// Contraction plans, the executor, and running them.
#include "tilecc/contract.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "tilecc/blas.hpp"
#include "tilecc/error.hpp"
#include "tilecc/kernels/triples.hpp"
#include "tilecc/ops.hpp"

namespace nb = nanobind;

namespace tilecc::python {
namespace {

using OperandTuple = std::tuple<ShapePtr, LabelList, std::string>;
Operand operand(const OperandTuple& t) { return {std::get<0>(t), std::get<1>(t), std::get<2>(t)}; }

nb::dict run_stats(const RunStats& r) {
  nb::dict d;
  d["tasks"] = r.tasks;
  d["seconds"] = r.seconds;
  d["counter_calls"] = r.counter_calls;
  d["busy_seconds"] = r.busy_seconds;
  return d;
}

}  // namespace

void bind_contract(nb::module_& m) {
  nb::class_<Executor>(m, "Executor")
      .def(nb::init<int, const std::string&, PolicyOptions>(), nb::arg("threads"),
           nb::arg("policy"), nb::arg("options"))
      .def_prop_ro("threads", &Executor::threads)
      .def_prop_ro("policy", &Executor::policy_name)
      .def_prop_ro("scratch_high_water_bytes", &Executor::scratch_high_water_bytes);

  nb::class_<PolicyOptions>(m, "PolicyOptions")
      .def(nb::init<>())
      .def_rw("quantum", &PolicyOptions::quantum)
      .def_rw("blas_parallel_task_flops", &PolicyOptions::blas_parallel_task_flops);

  nb::class_<ContractionPlan>(m, "ContractionPlan")
      .def(
          "__init__",
          [](ContractionPlan* self, const OperandTuple& c, const OperandTuple& a,
             const OperandTuple& b) {
            nb::gil_scoped_release release;
            new (self) ContractionPlan(operand(c), operand(a), operand(b));
          },
          nb::arg("c"), nb::arg("a"), nb::arg("b"))
      .def_prop_ro("num_tasks", [](const ContractionPlan& p) { return p.tasks().size(); })
      .def_prop_ro("num_products", &ContractionPlan::num_products)
      .def_prop_ro("dense_flops", &ContractionPlan::dense_flops)
      .def_prop_ro("executed_flops", &ContractionPlan::executed_flops)
      .def_prop_ro("zero_by_symmetry", &ContractionPlan::zero_by_symmetry)
      .def_prop_ro("summed_symmetry_order", &ContractionPlan::summed_symmetry_order)
      .def_prop_ro("scratch_bytes_per_worker", &ContractionPlan::scratch_bytes_per_worker)
      .def_prop_ro("permuted_operands", &ContractionPlan::permuted_operands)
      .def_prop_ro("inspector_seconds", &ContractionPlan::inspector_seconds)
      .def_prop_ro("output_mode",
                   [](const ContractionPlan& p) {
                     switch (p.output()) {
                       case ContractionPlan::Output::direct:
                         return "direct";
                       case ContractionPlan::Output::transposed:
                         return "transposed";
                       default:
                         return "buffered";
                     }
                   })
      .def_prop_ro("task_costs", &ContractionPlan::task_costs)
      .def("summary", &ContractionPlan::summary);

  m.def(
      "contract",
      [](const ContractionPlan& plan, double alpha, const BlockTensor& a, const BlockTensor& b,
         BlockTensor& c, Executor& ex) {
        ContractStats s;
        {
          nb::gil_scoped_release release;
          s = contract(plan, alpha, a, b, c, ex);
        }
        nb::dict d = run_stats(s.run);
        d["flops"] = s.flops;
        return d;
      },
      nb::arg("plan"), nb::arg("alpha"), nb::arg("a"), nb::arg("b"), nb::arg("c"),
      nb::arg("executor"));

  m.def(
      "add",
      [](const OperandTuple& c_labels, BlockTensor& c, const OperandTuple& a_labels,
         const BlockTensor& a, double alpha, double beta, Executor& ex) {
        nb::gil_scoped_release release;
        add(operand(c_labels), c, operand(a_labels), a, alpha, beta, ex);
      },
      nb::arg("c_labels"), nb::arg("c"), nb::arg("a_labels"), nb::arg("a"), nb::arg("alpha"),
      nb::arg("beta"), nb::arg("executor"));

  using Array = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
  m.def(
      "closed_shell_triples_for_i",
      [](Array iabf, Array iajm, Array t2, Array t1, Array fov, Array ovov, Array eo, Array ev,
         extent_t i, Executor& ex) {
        kernels::TriplesInputs in;
        in.no = static_cast<extent_t>(t1.shape(0));
        in.nv = static_cast<extent_t>(t1.shape(1));
        const extent_t no = in.no, nv = in.nv;
        TILECC_CHECK(iabf.size() == static_cast<std::size_t>(no * nv * nv * nv) &&
                         iajm.size() == static_cast<std::size_t>(no * nv * no * no) &&
                         t2.size() == static_cast<std::size_t>(no * no * nv * nv) &&
                         fov.size() == static_cast<std::size_t>(no * nv) &&
                         ovov.size() == static_cast<std::size_t>(no * nv * no * nv) &&
                         eo.size() == static_cast<std::size_t>(no) &&
                         ev.size() == static_cast<std::size_t>(nv) && i >= 0 && i < no,
                     "closed_shell_triples_for_i: inconsistent array sizes.");
        in.iabf = iabf.data();
        in.iajm = iajm.data();
        in.t2 = t2.data();
        in.t1 = t1.data();
        in.fov = fov.data();
        in.ovov = ovov.data();
        in.eo = eo.data();
        in.ev = ev.data();
        // Tasks: the pairs i <= j <= k, each weighted by the orderings of (i, j, k).
        std::vector<std::pair<extent_t, extent_t>> pairs;
        for (extent_t j = i; j < no; ++j)
          for (extent_t k = j; k < no; ++k) pairs.emplace_back(j, k);
        std::vector<double> costs(pairs.size(), 1.0);
        std::vector<double> partial(static_cast<std::size_t>(ex.threads()), 0.0);
        {
          nb::gil_scoped_release release;
          blas::ensure_loaded();
          ex.run(costs, [&](task_id_t t, int worker) {
            const auto [j, k] = pairs[static_cast<std::size_t>(t)];
            const double weight = (i == j && j == k) ? 1.0 : (i == j || j == k) ? 3.0 : 6.0;
            double* scratch = ex.workspace(worker).a.get(8 * nv * nv * nv);
            partial[static_cast<std::size_t>(worker)] +=
                weight * kernels::closed_shell_triples_ijk(in, i, j, k, scratch);
          });
        }
        double sum = 0.0;
        for (double p : partial) sum += p;
        return sum;
      },
      nb::arg("iabf"), nb::arg("iajm"), nb::arg("t2"), nb::arg("t1"), nb::arg("fov"),
      nb::arg("ovov"), nb::arg("eo"), nb::arg("ev"), nb::arg("i"), nb::arg("executor"));

  m.def(
      "run_empty_tasks",
      [](task_id_t n, Executor& ex) {
        RunStats r;
        {
          nb::gil_scoped_release release;
          r = run_empty_tasks(n, ex);
        }
        return run_stats(r);
      },
      nb::arg("tasks"), nb::arg("executor"));
}

}  // namespace tilecc::python
