#include "tilecc/runtime.hpp"

#include <algorithm>
#include <numeric>

#include "detail/labels.hpp"
#include "tilecc/error.hpp"
#include "tilecc/store.hpp"

namespace tilecc {
namespace {

// Each weight's fraction of their sum; equal fractions when they sum to 0.
std::vector<double> shares(std::span<const double> weights) {
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<double> out;
  for (const double w : weights)
    out.push_back(total > 0.0 ? w / total : 1.0 / static_cast<double>(weights.size()));
  return out;
}

// The options checked, and given the ranks' counter when distributed.
RuntimeOptions prepared(RuntimeOptions options, const std::shared_ptr<Communicator>& comm) {
  check_store_name(options.store);
  if (comm != nullptr && comm->size() > 1) {
    TILECC_CHECK(options.store == "mpi", "the '", options.store, "' store would give each of the ",
                 comm->size(),
                 " ranks a whole copy of every tensor; a run on several ranks "
                 "keeps its blocks in the 'mpi' store.");
    options.policy_options.counter = std::make_shared<GlobalCounter>(comm);
  }
  return options;
}

}  // namespace

const ContractionPlan& PlannedContraction::plan() const {
  TILECC_CHECK(plan_.has_value(), "the plan of ", detail::show(c_), " += ", detail::show(a_), " * ",
               detail::show(b_), " is not built yet; build the runtime's pending plans.");
  return *plan_;
}

Schedule& PlannedContraction::schedule() {
  plan();
  return *schedule_;
}

const Schedule& PlannedContraction::schedule() const {
  plan();
  return *schedule_;
}

Runtime::Runtime(RuntimeOptions options, CostModel model, std::shared_ptr<Communicator> comm)
    : comm_(std::move(comm)),
      options_(prepared(std::move(options), comm_)),
      model_(std::move(model)),
      executor_(options_.threads, options_.policy, options_.policy_options, options_.slow),
      budget_(std::make_shared<MemoryBudget>(options_.memory_budget_bytes)),
      scratch_(std::make_shared<ScratchSpace>(options_.scratch_directory, options_.keep_scratch,
                                              options_.memory_budget_bytes)) {
  executor_.set_tracing(options_.trace);
}

void Runtime::set_cost_model(CostModel model) {
  if (comm_ != nullptr && comm_->size() > 1) {
    std::vector<double> values(model.gemm.begin(), model.gemm.end());
    values.insert(values.end(), model.permute.begin(), model.permute.end());
    comm_->broadcast(values);
    std::copy_n(values.begin(), model.gemm.size(), model.gemm.begin());
    std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(model.gemm.size()),
                model.permute.size(), model.permute.begin());
  }
  model_ = std::move(model);
}

PlanLayout Runtime::layout() const {
  if (options_.policy == "tce") return PlanLayout::tce;
  return options_.store == "disk" || options_.placed ? PlanLayout::staged : PlanLayout::inspector;
}

PlannedContraction& Runtime::request(const Operand& c, const Operand& a, const Operand& b) {
  Key key{c.shape.get(), c.labels, a.shape.get(), a.labels, b.shape.get(), b.labels};
  auto [at, added] = plans_.try_emplace(std::move(key), nullptr);
  if (added) {
    at->second = std::make_unique<PlannedContraction>(next_id_++, c, a, b);
    order_.push_back(at->second.get());
    pending_.push_back(at->second.get());
  } else {
    ++stats_.plans_reused;
  }
  ++at->second->uses_;
  return *at->second;
}

std::vector<PlannedContraction*> Runtime::build_pending() {
  if (pending_.empty()) return {};
  std::vector<PlanRequest> requests;
  for (const PlannedContraction* p : pending_) requests.push_back({p->c_, p->a_, p->b_});
  BuiltPlans built;
  try {
    // Distributed, a plan is cut for every rank's workers: its tasks are shared among them all.
    const int workers = options_.threads * (comm_ != nullptr ? comm_->size() : 1);
    built = build_plans(std::move(requests), layout(), model_, workers, executor_);
  } catch (...) {
    drop_pending();
    throw;
  }
  std::vector<double> seconds;
  for (const ContractionPlan& plan : built.plans) seconds.push_back(plan.inspector_seconds());
  const std::vector<double> part = shares(seconds);
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    PlannedContraction& p = *pending_[i];
    p.plan_.emplace(std::move(built.plans[i]));
    p.schedule_.emplace(*p.plan_);
    p.schedule_->set_policy_name(options_.policy);
    p.inspector_charged_ = built.seconds * part[i];
    p.built_by_ = built.workers[i];
  }
  stats_.plans_built += static_cast<std::int64_t>(pending_.size());
  stats_.inspector_seconds += built.seconds;
  std::vector<PlannedContraction*> done = std::move(pending_);
  pending_.clear();
  const std::vector<const PlannedContraction*> view(done.begin(), done.end());
  for (const auto& observer : observers_) observer->plans_built(view);
  return done;
}

void Runtime::drop_pending() {
  for (PlannedContraction* p : pending_) {
    order_.erase(std::find(order_.begin(), order_.end(), p));
    plans_.erase(Key{p->c_.shape.get(), p->c_.labels, p->a_.shape.get(), p->a_.labels,
                     p->b_.shape.get(), p->b_.labels});
  }
  pending_.clear();
}

bool Runtime::runs_alone(const PlannedContraction& planned) const {
  return options_.policy == "tce" || uses_threaded_blas(planned.plan(), executor_);
}

BatchRun Runtime::run(std::span<const Contraction> items) {
  std::vector<BatchItem> batch;
  for (const Contraction& item : items) {
    Schedule& schedule = item.planned->schedule();
    schedule.correct(corrector_.correction());
    batch.push_back({&schedule, item.alpha, item.a, item.b, item.c});
  }
  BatchStats stats =
      contract_batch(batch, executor_, options_.refine, comm_.get(), options_.workq_depth);
  BatchRun out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Schedule& schedule = *batch[i].schedule;
    corrector_.observe(schedule.plan().modelled_seconds(), schedule.measured_seconds());
    ContractionRun item;
    item.task_seconds = std::move(stats.item_task_seconds[i]);
    item.flops = stats.item_flops[i];
    item.phases = stats.run.segment_phases[i];
    item.model_error = schedule.model_error();
    stats_.contractions += 1;
    stats_.tasks += static_cast<std::int64_t>(item.task_seconds.size());
    stats_.flops += item.flops;
    stats_.dense_flops += schedule.plan().dense_flops();
    stats_.task_seconds += std::accumulate(item.task_seconds.begin(), item.task_seconds.end(), 0.0);
    out.items.push_back(std::move(item));
  }
  stats_.seconds += stats.run.seconds;
  stats_.shared_calls += stats.run.shared_calls;
  out.run = std::move(stats.run);
  for (const auto& observer : observers_) observer->batch_ran(items, out);
  return out;
}

std::vector<const PlannedContraction*> Runtime::contractions() const {
  return {order_.begin(), order_.end()};
}

const Schedule* Runtime::schedule_of(const ContractionPlan& plan) const {
  for (const PlannedContraction* p : order_)
    if (p->built() && &p->plan() == &plan) return &p->schedule();
  return nullptr;
}

void Runtime::add_observer(std::shared_ptr<RuntimeObserver> observer) {
  observers_.push_back(std::move(observer));
}

}  // namespace tilecc
