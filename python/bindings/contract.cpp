// Contraction plans, the executor, and running them.
#include "tilecc/contract.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "tilecc/blas.hpp"
#include "tilecc/error.hpp"
#include "tilecc/hypergraph.hpp"
#include "tilecc/ops.hpp"
#include "tilecc/runtime.hpp"

namespace nb = nanobind;

namespace tilecc::python {
namespace {

// Every phase slice the workers recorded in the last run, as columns.
nb::dict trace_events(Executor& ex) {
  std::vector<std::int32_t> worker;
  std::vector<std::uint8_t> phase;
  std::vector<task_id_t> task;
  std::vector<std::int32_t> segment;
  std::vector<double> start, end;
  for (int w = 0; w < ex.threads(); ++w)
    for (const TraceEvent& e : ex.timeline(w).events()) {
      worker.push_back(w);
      phase.push_back(static_cast<std::uint8_t>(e.phase));
      task.push_back(e.task);
      segment.push_back(e.segment);
      start.push_back(e.start);
      end.push_back(e.end);
    }
  nb::dict d;
  d["worker"] = to_numpy(std::move(worker));
  d["phase"] = to_numpy(std::move(phase));
  d["task"] = to_numpy(std::move(task));
  d["segment"] = to_numpy(std::move(segment));
  d["start"] = to_numpy(std::move(start));
  d["end"] = to_numpy(std::move(end));
  return d;
}

const char* layout_name(PlanLayout layout) {
  switch (layout) {
    case PlanLayout::tce:
      return "tce";
    case PlanLayout::staged:
      return "staged";
    case PlanLayout::inspector:
      break;
  }
  return "inspector";
}

// A stage step as Python gives it: tasks, held blocks as (operand, slot), streamed.
using StepIn = std::tuple<std::vector<task_id_t>, std::vector<std::pair<int, slot_t>>, bool>;

std::vector<StagedBlock> staged_blocks(const std::vector<std::pair<int, slot_t>>& list) {
  std::vector<StagedBlock> out;
  for (const auto& [tensor, slot] : list) {
    TILECC_CHECK(tensor >= 0 && tensor < 3,
                 "a staged block's operand is 0 (a), 1 (b) or 2 (c), got ", tensor, ".");
    out.push_back({static_cast<TaskBlockHypergraph::Tensor>(tensor), slot});
  }
  return out;
}

PlanLayout layout_named(const std::string& name) {
  for (const PlanLayout l : {PlanLayout::inspector, PlanLayout::tce, PlanLayout::staged})
    if (name == layout_name(l)) return l;
  TILECC_CHECK(false, "unknown plan layout '", name,
               "'; valid layouts are: inspector, tce, staged.");
  return PlanLayout::inspector;
}

}  // namespace

void bind_contract(nb::module_& m) {
  nb::class_<PolicyOptions>(m, "PolicyOptions")
      .def(nb::init<>())
      .def_rw("quantum", &PolicyOptions::quantum)
      .def_rw("group_size", &PolicyOptions::group_size)
      .def_rw("blas_parallel_task_flops", &PolicyOptions::blas_parallel_task_flops);

  nb::class_<Executor>(m, "Executor")
      .def_ro_static("spin_seconds", &Executor::spin_seconds)
      .def_prop_ro("threads", &Executor::threads)
      .def_prop_ro("policy", &Executor::policy_name)
      .def_prop_ro("slow_worker",
                   [](const Executor& ex) {
                     return std::make_tuple(ex.slow_worker().worker, ex.slow_worker().factor);
                   })
      .def_prop_ro("scratch_high_water_bytes", &Executor::scratch_high_water_bytes)
      .def_prop_ro(
          "worker_scratch",
          [](Executor& ex) {
            nb::list workers;
            for (int w = 0; w < ex.threads(); ++w) {
              nb::dict d;
              d["allocations"] = ex.workspace(w).allocations();
              d["frees"] = ex.workspace(w).frees();
              d["high_water_bytes"] = ex.workspace(w).high_water_bytes();
              workers.append(d);
            }
            return workers;
          },
          "Per worker: its scratch allocations and frees so far and the most it has held.")
      .def_prop_ro(
          "scratch_mode",
          [](const Executor& ex) {
            return ex.scratch_mode() == ScratchMode::pooled ? "pooled" : "per-task";
          },
          "How workers allocate scratch ($TILECC_SCRATCH_ALLOCATION): pooled, or afresh per task.")
      .def_prop_rw("tracing", &Executor::tracing, &Executor::set_tracing)
      .def("wake", &Executor::wake)
      .def("trace_events", &trace_events);

  nb::class_<ModelError>(m, "ModelError")
      .def_ro("median", &ModelError::median)
      .def_ro("p90", &ModelError::p90)
      .def_ro("tasks", &ModelError::tasks);

  nb::class_<ContractionPlan>(m, "ContractionPlan")
      .def(
          "__init__",
          [](ContractionPlan* self, const OperandTuple& c, const OperandTuple& a,
             const OperandTuple& b, const std::string& layout, const CostModel& model,
             int workers) {
            const PlanLayout l = layout_named(layout);
            nb::gil_scoped_release release;
            new (self) ContractionPlan(operand(c), operand(a), operand(b), l, model, workers);
          },
          nb::arg("c"), nb::arg("a"), nb::arg("b"), nb::arg("layout") = "inspector",
          nb::arg("model") = CostModel{}, nb::arg("workers") = 1)
      .def_prop_ro("workers", &ContractionPlan::workers)
      .def_prop_ro("num_tasks", [](const ContractionPlan& p) { return p.tasks().size(); })
      .def_prop_ro("num_products", &ContractionPlan::num_products)
      .def_prop_ro("dense_flops", &ContractionPlan::dense_flops)
      .def_prop_ro("executed_flops", &ContractionPlan::executed_flops)
      .def_prop_ro("zero_by_symmetry", &ContractionPlan::zero_by_symmetry)
      .def_prop_ro("summed_symmetry_order", &ContractionPlan::summed_symmetry_order)
      .def_prop_ro("scratch_bytes_per_worker", &ContractionPlan::scratch_bytes_per_worker)
      .def_prop_ro("permuted_operands", &ContractionPlan::permuted_operands)
      .def_prop_ro("inspector_seconds", &ContractionPlan::inspector_seconds)
      .def_prop_ro("inspector_started", &ContractionPlan::inspector_started)
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
      .def_prop_ro("layout", [](const ContractionPlan& p) { return layout_name(p.layout()); })
      .def_prop_ro("loop_tuples", [](const ContractionPlan& p) { return p.loop().size(); })
      .def_prop_ro("modelled_seconds", &ContractionPlan::modelled_seconds)
      .def_prop_ro("expression", &ContractionPlan::expression)
      .def("summary", &ContractionPlan::summary)
      .def(
          "hypergraph",
          [](const ContractionPlan& plan) {
            const TaskBlockHypergraph h = task_block_hypergraph(plan);
            nb::list nets;
            for (const TaskBlockHypergraph::Net& net : h.nets)
              nets.append(nb::make_tuple("abc"[static_cast<int>(net.tensor)], net.slot, net.bytes));
            return nb::make_tuple(h.task_weights, nets, h.pin_offsets, h.pins);
          },
          "The task-block hypergraph: (task weights in seconds, nets as (tensor, slot, bytes), "
          "pin offsets, pins).");

  nb::class_<Schedule>(m, "Schedule")
      .def(nb::init<const ContractionPlan&>(), nb::arg("plan"), nb::keep_alive<1, 2>())
      .def_prop_ro("plan", &Schedule::plan, nb::rv_policy::reference_internal)
      .def_prop_ro("estimated_seconds", &Schedule::estimated_seconds)
      .def_prop_ro("measured_seconds", &Schedule::measured_seconds)
      .def("correct", &Schedule::correct, nb::arg("correction"))
      .def(
          "costs",
          [](const Schedule& s, bool refine) {
            const auto c = s.costs(refine);
            return std::vector<double>(c.begin(), c.end());
          },
          nb::arg("refine"))
      .def("model_error", &Schedule::model_error)
      .def_prop_rw("policy", &Schedule::policy_name, &Schedule::set_policy_name)
      .def(
          "set_staging",
          [](Schedule& s,
             const std::vector<
                 std::tuple<std::vector<std::pair<int, slot_t>>, std::vector<StepIn>>>& stages) {
            Staging staging;
            for (const auto& [shared, steps] : stages) {
              Stage stage{staged_blocks(shared), {}};
              for (const auto& [tasks, held, streamed] : steps)
                stage.steps.push_back({tasks, staged_blocks(held), streamed});
              staging.push_back(std::move(stage));
            }
            s.set_staging(std::move(staging));
          },
          nb::arg("stages"),
          "Run the plan through these stages: each (shared blocks, steps), a step (tasks, its "
          "blocks, streamed), a block (operand 0/1/2 for a/b/c, slot). An empty list: no "
          "staging.")
      .def_prop_ro("staged", [](const Schedule& s) { return !s.staging().empty(); })
      .def_prop_rw("placement", &Schedule::placement, &Schedule::set_placement,
                   "The rank each task runs on across ranks; empty: the policy decides.")
      .def("summary", &Schedule::summary);

  nb::class_<ModelCorrection>(m, "ModelCorrection")
      .def(nb::init<>())
      .def_rw("scale", &ModelCorrection::scale)
      .def_rw("overhead", &ModelCorrection::overhead);
  m.def(
      "contract_batch",
      [](const std::vector<std::tuple<Schedule*, double, const BlockTensor*, const BlockTensor*,
                                      BlockTensor*>>& batch,
         Executor& ex, bool refine) {
        std::vector<BatchItem> items;
        for (const auto& [schedule, alpha, a, b, c] : batch)
          items.push_back({schedule, alpha, a, b, c});
        nb::gil_scoped_release release;
        BatchStats s = contract_batch(items, ex, refine);
        BatchRun out;
        for (std::size_t i = 0; i < items.size(); ++i)
          out.items.push_back({std::move(s.item_task_seconds[i]), s.item_flops[i],
                               s.run.segment_phases[i], items[i].schedule->model_error()});
        out.run = std::move(s.run);
        return out;
      },
      nb::arg("items"), nb::arg("executor"), nb::arg("refine") = true,
      "Run (schedule, alpha, a, b, c) contractions as one batch, outside any runtime.");

  m.def(
      "add",
      [](const OperandTuple& c_labels, BlockTensor& c, const OperandTuple& a_labels,
         const BlockTensor& a, double alpha, double beta, Executor& ex) {
        nb::gil_scoped_release release;
        add(operand(c_labels), c, operand(a_labels), a, alpha, beta, ex);
      },
      nb::arg("c_labels"), nb::arg("c"), nb::arg("a_labels"), nb::arg("a"), nb::arg("alpha"),
      nb::arg("beta"), nb::arg("executor"));

  m.def(
      "run_empty_tasks",
      [](task_id_t n, Executor& ex) {
        nb::gil_scoped_release release;
        return run_empty_tasks(n, ex);
      },
      nb::arg("tasks"), nb::arg("executor"));
}

}  // namespace tilecc::python
