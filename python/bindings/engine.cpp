// The runtime object (include/tilecc/runtime.hpp): plan cache, schedules, batches run and learned
// from, statistics; and the typed records of a run.
#include <nanobind/stl/shared_ptr.h>

#include <numeric>

#include "bindings.hpp"
#include "convert.hpp"
#include "tilecc/error.hpp"
#include "tilecc/mpi_store.hpp"
#include "tilecc/runtime.hpp"

namespace nb = nanobind;

namespace tilecc::python {
namespace {

// Worker-seconds per phase of a run, summed over its workers: they add up to workers x seconds.
PhaseSeconds summed(const std::vector<PhaseSeconds>& per_worker) {
  PhaseSeconds total{};
  for (const PhaseSeconds& w : per_worker)
    for (std::size_t p = 0; p < total.size(); ++p) total[p] += w[p];
  return total;
}

std::vector<double> busy(const RunStats& r) {
  std::vector<double> out;
  for (const PhaseSeconds& w : r.phases)
    out.push_back(w[static_cast<std::size_t>(Phase::permute)] +
                  w[static_cast<std::size_t>(Phase::gemm)] +
                  w[static_cast<std::size_t>(Phase::accumulate)]);
  return out;
}

}  // namespace

void bind_engine(nb::module_& m) {
  nb::class_<RunStats>(m, "RunStats")
      .def_ro("tasks", &RunStats::tasks)
      .def_ro("start", &RunStats::start)
      .def_ro("seconds", &RunStats::seconds)
      .def_ro("shared_calls", &RunStats::shared_calls)
      .def_prop_ro(
          "phases", [](const RunStats& r) { return phase_dict(summed(r.phases)); },
          "Worker-seconds per phase, summed over the workers.")
      .def_prop_ro("busy_seconds", &busy, "Per worker, its permute + GEMM + accumulate seconds.")
      .def_prop_ro(
          "task_seconds",
          [](const RunStats& r) { return to_numpy(std::vector<double>(r.task_seconds)); },
          nb::rv_policy::move);

  nb::class_<ContractionRun>(m, "ContractionRun")
      .def_prop_ro(
          "task_seconds",
          [](const ContractionRun& c) { return to_numpy(std::vector<double>(c.task_seconds)); },
          nb::rv_policy::move)
      .def_ro("flops", &ContractionRun::flops)
      .def_prop_ro("phases", [](const ContractionRun& c) { return phase_dict(c.phases); })
      .def_ro("model_error", &ContractionRun::model_error);

  nb::class_<BatchRun>(m, "BatchRun")
      .def_ro("run", &BatchRun::run)
      .def_ro("items", &BatchRun::items);

  nb::class_<RuntimeStats>(m, "RuntimeStats")
      .def_ro("contractions", &RuntimeStats::contractions)
      .def_ro("tasks", &RuntimeStats::tasks)
      .def_ro("plans_built", &RuntimeStats::plans_built)
      .def_ro("plans_reused", &RuntimeStats::plans_reused)
      .def_ro("shared_calls", &RuntimeStats::shared_calls)
      .def_ro("flops", &RuntimeStats::flops)
      .def_ro("dense_flops", &RuntimeStats::dense_flops)
      .def_ro("seconds", &RuntimeStats::seconds)
      .def_ro("inspector_seconds", &RuntimeStats::inspector_seconds)
      .def_ro("task_seconds", &RuntimeStats::task_seconds);

  nb::class_<PlannedContraction>(m, "PlannedContraction")
      .def_prop_ro("id", &PlannedContraction::id)
      .def_prop_ro("built", &PlannedContraction::built)
      .def_prop_ro("plan", &PlannedContraction::plan, nb::rv_policy::reference_internal)
      .def_prop_ro(
          "schedule", [](PlannedContraction& p) -> Schedule& { return p.schedule(); },
          nb::rv_policy::reference_internal)
      .def_prop_ro("inspector_charged", &PlannedContraction::inspector_charged)
      .def_prop_ro("built_by", &PlannedContraction::built_by)
      .def_prop_ro("uses", &PlannedContraction::uses);

  nb::class_<Communicator>(m, "Communicator")
      .def(
          "__init__",
          [](Communicator* self, int ranks_per_node) {
            new (self) Communicator(MPI_COMM_WORLD, ranks_per_node);
          },
          nb::arg("ranks_per_node") = 0,
          "MPI_COMM_WORLD's ranks (MPI initialised by mpi4py), with real nodes, or virtual ones "
          "of ranks_per_node ranks. Collective; a process makes one.")
      .def_prop_ro("rank", &Communicator::rank)
      .def_prop_ro("size", &Communicator::size)
      .def_prop_ro("nodes", &Communicator::nodes)
      .def("node_of", &Communicator::node_of, nb::arg("rank"))
      .def_prop_ro(
          "network", [](const Communicator& c) { return c.network().describe(); },
          "The emulated network between nodes (TILECC_NET_LATENCY_US, TILECC_NET_GBPS): 'off' "
          "or its latency and bandwidth.")
      .def("barrier", &Communicator::barrier)
      .def(
          "sum", [](const Communicator& c, double x) { return c.sum(x); }, nb::arg("value"))
      .def(
          "share",
          [](const Communicator& c, const std::vector<double>& costs) {
            return rank_share(costs, c);
          },
          nb::arg("costs"),
          "This rank's items of work with these costs: LPT over the ranks, the same split on "
          "every rank, ascending.");

  m.def(
      "hash_owners", [](slot_t blocks, int ranks) { return hash_placement(blocks, ranks); },
      nb::arg("blocks"), nb::arg("ranks"),
      "The owner rank of each of a tensor's blocks in the mpi store (a hash of the slot).");

  m.def(
      "lpt_bins",
      [](const std::vector<double>& costs, int bins) {
        TILECC_CHECK(bins >= 1, "LPT needs at least one bin, not ", bins, ".");
        return lpt_bins(costs, bins);
      },
      nb::arg("costs"), nb::arg("bins"),
      "The bin of each task under LPT over equal bins: how the static policies split tasks "
      "over ranks.");

  nb::class_<Runtime>(m, "Runtime")
      .def(
          "__init__",
          [](Runtime* self, int threads, const std::string& policy, const PolicyOptions& options,
             bool refine, bool trace, const std::string& store, const std::string& slow_worker,
             std::int64_t memory_budget, std::shared_ptr<Communicator> comm,
             const std::string& scratch, bool keep_scratch, int workq_depth, bool placed) {
            RuntimeOptions o;
            o.threads = threads;
            o.policy = policy;
            o.policy_options = options;
            o.refine = refine;
            o.trace = trace;
            o.store = store;
            o.slow = SlowWorker::parse(slow_worker);
            o.memory_budget_bytes = memory_budget;
            o.scratch_directory = scratch;
            o.keep_scratch = keep_scratch;
            o.workq_depth = workq_depth;
            o.placed = placed;
            new (self) Runtime(std::move(o), CostModel{}, std::move(comm));
          },
          nb::arg("threads"), nb::arg("policy"), nb::arg("options"), nb::arg("refine"),
          nb::arg("trace"), nb::arg("store"), nb::arg("slow_worker"), nb::arg("memory_budget") = 0,
          nb::arg("comm") = nullptr, nb::arg("scratch") = "", nb::arg("keep_scratch") = false,
          nb::arg("workq_depth") = 0, nb::arg("placed") = false)
      .def_prop_ro(
          "memory",
          [](const Runtime& r) {
            nb::dict d;
            d["limit_bytes"] = r.memory().limit();
            d["used_bytes"] = r.memory().used();
            d["high_water_bytes"] = r.memory().high_water();
            return d;
          },
          "Bytes of tensor storage held now and at most, against the budget (0: none).")
      .def_prop_ro(
          "scratch",
          [](const Runtime& r) {
            nb::dict d;
            d["resident_bytes"] = r.scratch().resident();
            d["resident_high_water_bytes"] = r.scratch().high_water();
            d["resident_limit_bytes"] = r.scratch().limit();
            d["read_ahead_bytes"] = r.scratch().read_ahead();
            return d;
          },
          "The disk tensors' blocks in memory now and at most, against the limit (0: none).")
      .def(
          "flush_scratch", [](Runtime& r) { r.scratch().flush(); },
          "Write back and drop every disk block no stage holds.")
      .def_prop_ro("distributed", &Runtime::distributed)
      .def_prop_ro(
          "traffic",
          [](const Runtime& r) {
            nb::dict d;
            d["reads"] = transfer_dict(r.traffic().reads);
            d["writes"] = transfer_dict(r.traffic().writes);
            return d;
          },
          "Every block its tensors' stores read and wrote: {'reads'|'writes': {class: (bytes, "
          "calls)}}.")
      .def(
          "tensor",
          [](const Runtime& r, ShapePtr shape) { return r.make_tensor(std::move(shape)); },
          nb::arg("shape"), "A zeroed tensor of this runtime (collective when distributed).")
      .def_prop_ro("executor", &Runtime::executor, nb::rv_policy::reference_internal)
      .def_prop_ro("store", [](const Runtime& r) { return r.options().store; })
      .def_prop_ro("mappings", &Runtime::mappings,
                   "The cache of freed tensor mappings its tensors share.")
      .def_prop_ro("stats", &Runtime::stats)
      .def_prop_ro("correction", [](const Runtime& r) { return r.corrector().correction(); })
      .def_prop_ro("corrected_tasks", [](const Runtime& r) { return r.corrector().tasks(); })
      .def("set_cost_model", &Runtime::set_cost_model, nb::arg("model"))
      .def(
          "request",
          [](Runtime& r, const OperandTuple& c, const OperandTuple& a, const OperandTuple& b)
              -> PlannedContraction& { return r.request(operand(c), operand(a), operand(b)); },
          nb::arg("c"), nb::arg("a"), nb::arg("b"), nb::rv_policy::reference_internal,
          "The cached contraction c += a * b, added unbuilt if new.")
      .def_prop_ro("pending", &Runtime::pending)
      .def(
          "build_pending",
          [](Runtime& r) {
            std::vector<PlannedContraction*> built;
            {
              nb::gil_scoped_release release;
              built = r.build_pending();
            }
            return built;
          },
          nb::rv_policy::reference_internal)
      .def("drop_pending", &Runtime::drop_pending)
      .def("runs_alone", &Runtime::runs_alone, nb::arg("planned"))
      .def(
          "run",
          [](Runtime& r,
             const std::vector<std::tuple<PlannedContraction*, double, const BlockTensor*,
                                          const BlockTensor*, BlockTensor*>>& batch) {
            std::vector<Contraction> items;
            for (const auto& [planned, alpha, a, b, c] : batch)
              items.push_back({planned, alpha, a, b, c});
            nb::gil_scoped_release release;
            return r.run(items);
          },
          nb::arg("items"),
          "Run (planned, alpha, a, b, c) contractions as one batch; returns the BatchRun.")
      .def(
          "schedule_of",
          [](const Runtime& r, const ContractionPlan& plan) -> const Schedule& {
            const Schedule* s = r.schedule_of(plan);
            TILECC_CHECK(s != nullptr, "the plan for ", plan.expression(),
                         " was not made by this runtime.");
            return *s;
          },
          nb::arg("plan"), nb::rv_policy::reference_internal)
      .def("contractions", &Runtime::contractions, nb::rv_policy::reference_internal);
}

}  // namespace tilecc::python
