#pragma once
/** @file Runtime: the engine one job runs on (TiledArray's World, Taskflow's executor with its
 * observers). It owns the executor, the plan cache with each plan's schedule, the cost model and
 * the correction learned from measured runs, the refinement of each plan's costs from its last
 * run, the store kind of its tensors, statistics, and observers of its work. A C++ caller gets
 * the feedback loop a Python Context has; a communicator will have one place to attach. Two
 * runtimes in one process share nothing. */
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "tilecc/comm.hpp"
#include "tilecc/contract.hpp"
#include "tilecc/correction.hpp"
#include "tilecc/cost.hpp"
#include "tilecc/exec.hpp"
#include "tilecc/inspect.hpp"
#include "tilecc/schedule.hpp"
#include "tilecc/scratch.hpp"

namespace tilecc {

/** How a runtime runs: validated once, when the runtime is made. */
struct RuntimeOptions {
  int threads = 1;
  std::string policy = "counter";  ///< a registered policy (sched.hpp)
  PolicyOptions policy_options{};
  bool refine = true;            ///< schedule each run of a plan with its last run's task times
  bool trace = false;            ///< keep every phase slice of every run (Executor::set_tracing)
  std::string store = "memory";  ///< the registered store its tensors' blocks live in
  /// Bytes its tensors may hold at once (per rank when distributed); 0: no limit.
  std::int64_t memory_budget_bytes = 0;
  /// Where the 'disk' store's files go (empty: $TILECC_SCRATCH, else a temporary directory),
  /// and whether they stay when the job ends.
  std::string scratch_directory;
  bool keep_scratch = false;
  /// On several ranks, WorkQ: tasks each rank's courier fetches ahead of its workers (0: off,
  /// every task fetches its own blocks).
  int workq_depth = 0;
  /// On several ranks, a placement puts each plan's tasks on ranks (by the blocks' owners): its
  /// plans then keep one output block per task (PlanLayout::staged), so that a task's output
  /// lives where the placement puts it, as paper 004's tasks do.
  bool placed = false;
  SlowWorker slow{};
};

/** One contraction c += a * b in the runtime's plan cache: its plan, once built, and the plan's
 *  schedule in this runtime. Its address is stable for the runtime's life. */
class PlannedContraction {
 public:
  PlannedContraction(std::int64_t id, Operand c, Operand a, Operand b)
      : c_(std::move(c)), a_(std::move(a)), b_(std::move(b)), id_(id) {}
  bool built() const { return plan_.has_value(); }
  /** The plan; an error before it is built. */
  const ContractionPlan& plan() const;
  Schedule& schedule();
  const Schedule& schedule() const;
  /** The part of its batch's inspector wall time charged to this plan (in proportion to the
   *  time each plan of the batch took to build) and the worker that built it. */
  double inspector_charged() const { return inspector_charged_; }
  int built_by() const { return built_by_; }
  /** Times it was asked for; each after the first reused it (RuntimeStats::plans_reused). */
  std::int64_t uses() const { return uses_; }
  /** Its number in its runtime, in order of first request; never given to another. */
  std::int64_t id() const { return id_; }
  const Operand& c() const { return c_; }
  const Operand& a() const { return a_; }
  const Operand& b() const { return b_; }

 private:
  friend class Runtime;
  Operand c_, a_, b_;
  std::optional<ContractionPlan> plan_;
  std::optional<Schedule> schedule_;
  double inspector_charged_ = 0.0;
  int built_by_ = 0;
  std::int64_t uses_ = 0;
  std::int64_t id_;
};

/** A contraction to run: *c += alpha * *a * *b as the planned contraction's plan says. */
struct Contraction {
  PlannedContraction* planned = nullptr;
  double alpha = 1.0;
  const BlockTensor* a = nullptr;
  const BlockTensor* b = nullptr;
  BlockTensor* c = nullptr;
};

/** What one contraction of a run did. */
struct ContractionRun {
  std::vector<double> task_seconds;  ///< per task of its plan, measured
  double flops = 0.0;                ///< GEMM flops executed
  PhaseSeconds phases{};             ///< the workers' time spent working for it
  ModelError model_error;            ///< its corrected prediction against these task times
};

/** What one run of a batch did. */
struct BatchRun {
  RunStats run;  ///< all the items' tasks as one run
  std::vector<ContractionRun> items;
};

/** Totals over everything a runtime has run. */
struct RuntimeStats {
  std::int64_t contractions = 0, tasks = 0, plans_built = 0, plans_reused = 0, shared_calls = 0;
  double flops = 0.0, dense_flops = 0.0;
  double seconds = 0.0;            ///< wall time of the runs
  double inspector_seconds = 0.0;  ///< wall time of the plan builds
  double task_seconds = 0.0;       ///< measured time inside tasks, summed over every task
};

/** Hooks on a runtime's work, called on the thread that asked for it, after the work. */
class RuntimeObserver {
 public:
  virtual ~RuntimeObserver() = default;
  virtual void plans_built(std::span<const PlannedContraction* const> built) { (void)built; }
  virtual void batch_ran(std::span<const Contraction> items, const BatchRun& run) {
    (void)items;
    (void)run;
  }
};

/**
 * @code
 *   Runtime runtime({.threads = 2, .policy = "counter"}, calibrated_model);
 *   PlannedContraction& r2 = runtime.request(c, a, b);    // cached by shapes and labels
 *   runtime.build_pending();                               // every new plan, on the workers
 *   runtime.run({{&r2, 0.5, &t2, &v, &out}});              // corrected, run, learned from
 * @endcode
 */
class Runtime {
 public:
  /** Refuses invalid options (threads, policy, quantum, group size, store) with one sentence.
   *  With a communicator of several ranks (every rank makes its runtime, collectively) the
   *  runtime is distributed: its tensors live in the `mpi` store, its policies take tasks
   *  through the ranks' GlobalCounter or run each rank's share, and its plans are cut for every
   *  rank's workers. */
  Runtime(RuntimeOptions options, CostModel model, std::shared_ptr<Communicator> comm = nullptr);
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const RuntimeOptions& options() const { return options_; }
  Executor& executor() { return executor_; }
  const CostModel& cost_model() const { return model_; }
  /** The model the next plans are built with (plans built before keep their predictions).
   *  Distributed, rank 0's model is every rank's (collective): plans must be the same everywhere.
   */
  void set_cost_model(CostModel model);
  /** The ranks, or null for a runtime of one process. */
  const Communicator* communicator() const { return comm_.get(); }
  bool distributed() const { return comm_ != nullptr && comm_->size() > 1; }
  const ModelCorrector& corrector() const { return corrector_; }
  /** The cache of freed tensor mappings its tensors' stores share (see mappings.hpp). */
  const std::shared_ptr<MappingCache>& mappings() const { return mappings_; }
  /** A zeroed tensor of this runtime: its blocks in the runtime's store kind, its large storage
   *  through the runtime's mapping cache (collective when distributed). */
  BlockTensor make_tensor(ShapePtr shape) const {
    return BlockTensor(std::move(shape), options_.store,
                       {mappings_, comm_, traffic_, budget_, scratch_});
  }
  /** The bytes its tensors hold, against its memory budget. */
  const MemoryBudget& memory() const { return *budget_; }
  /** That budget, for what else holds bytes against it (the (T) kernels' repacked inputs). */
  std::shared_ptr<MemoryBudget> memory_budget() const { return budget_; }
  /** Where its disk tensors' files go, and which of their blocks are in memory. */
  const ScratchSpace& scratch() const { return *scratch_; }
  ScratchSpace& scratch() { return *scratch_; }
  /** Every block its tensors' stores read and wrote, by transfer class. */
  const Traffic& traffic() const { return *traffic_; }
  const RuntimeStats& stats() const { return stats_; }
  /** The layout its plans are built in: NWChem TCE's under policy `tce`, unstacked tasks for the
   *  'disk' store's stage schedules and for placements, else the inspector's. */
  PlanLayout layout() const;

  /** The cached contraction c += a * b (keyed by the operands' shapes and labels), added unbuilt
   *  if new. Labels are checked when its plan is built. */
  PlannedContraction& request(const Operand& c, const Operand& a, const Operand& b);
  /** Build the plan of every contraction requested and not built yet, together on the workers,
   *  each with a fresh schedule; returns them. If one is refused, none of them is kept (they are
   *  dropped, as by drop_pending()) and the first refused one's error is thrown. */
  std::vector<PlannedContraction*> build_pending();
  /** Forget the contractions requested and not built (a deferred block that raised). */
  void drop_pending();
  /** Contractions requested and not built yet. */
  std::size_t pending() const { return pending_.size(); }
  /** Whether a contraction runs in no batch: every one under `tce` (TCE runs one at a time, the
   *  baseline), and those whose tasks parallelise inside a threaded BLAS instead. */
  bool runs_alone(const PlannedContraction& planned) const;
  /** Run the contractions as one batch (contract_batch): each schedule corrected by what earlier
   *  runs showed the model misses, run, its task times kept for refinement and learned from, the
   *  statistics counted, the observers told. Every plan must be built. */
  BatchRun run(std::span<const Contraction> items);
  /** Every planned contraction, in the order first requested. */
  std::vector<const PlannedContraction*> contractions() const;
  /** This runtime's schedule of one of its plans, or nullptr for a plan it did not build. */
  const Schedule* schedule_of(const ContractionPlan& plan) const;
  void add_observer(std::shared_ptr<RuntimeObserver> observer);

 private:
  using Key = std::tuple<const BlockShape*, LabelList, const BlockShape*, LabelList,
                         const BlockShape*, LabelList>;
  std::shared_ptr<Communicator> comm_;
  RuntimeOptions options_;
  CostModel model_;
  Executor executor_;
  ModelCorrector corrector_;
  RuntimeStats stats_;
  std::shared_ptr<MappingCache> mappings_ =
      std::make_shared<MappingCache>(MappingCache::default_limit_bytes());
  std::shared_ptr<Traffic> traffic_ = std::make_shared<Traffic>();
  std::shared_ptr<MemoryBudget> budget_;
  std::shared_ptr<ScratchSpace> scratch_;
  std::map<Key, std::unique_ptr<PlannedContraction>> plans_;
  std::vector<PlannedContraction*> order_, pending_;
  std::int64_t next_id_ = 0;
  std::vector<std::shared_ptr<RuntimeObserver>> observers_;
};

}  // namespace tilecc
