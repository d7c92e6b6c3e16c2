#include "tilecc/contract.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <map>
#include <numeric>
#include <optional>
#include <thread>

#include "detail/labels.hpp"
#include "tilecc/blas.hpp"
#include "tilecc/distributed.hpp"
#include "tilecc/error.hpp"
#include "tilecc/hypergraph.hpp"
#include "tilecc/kernels/permute.hpp"

namespace tilecc {
namespace {

void check_operand(const Operand& planned, const BlockTensor& t) {
  TILECC_CHECK(planned.shape == t.shape_ptr() || *planned.shape == t.shape(), "tensor given for ",
               detail::show(planned), " has shape ", t.shape().describe(),
               " but the plan was made for ", planned.shape->describe(), "; make a new plan.");
}

// An operand block through its store: a view where the store has one (not timed: it costs no
// more than a pointer), else a copy into the worker's buffer, timed as the fetch phase.
const double* fetch_block(const BlockTensor& t, slot_t slot, ScratchBuffer& buffer,
                          WorkerTimeline& clock) {
  if (!t.store().zero_copy()) clock.enter(Phase::fetch, clock.task());
  return t.store().fetch(slot, buffer);
}

// An output block a task adds into: the block itself where the store lets tasks write in place
// (no two tasks write the same memory), else a zeroed buffer that finish_output() accumulates
// into the store.
struct OutputBlock {
  double* data;
  bool staged;
};

OutputBlock output_block(BlockTensor& c, slot_t slot, ScratchBuffer& staging) {
  if (double* in_place = c.store().writable(slot)) return {in_place, false};
  const extent_t size = c.shape().block_size(slot);
  double* buffer = staging.get(size);
  std::fill_n(buffer, size, 0.0);
  return {buffer, true};
}

void finish_output(BlockTensor& c, slot_t slot, const OutputBlock& out, WorkerTimeline& clock) {
  if (!out.staged) return;
  clock.enter(Phase::accumulate, clock.task());
  c.store().accumulate(slot, out.data);
}

// Pointer to the operand block as a GEMM matrix: in place, or permuted into scratch. With `cut`
// (a stored axis) >= 0, only the indices [first, last) of that axis are permuted: a slab.
const double* matrix(const ContractionPlan::OperandLayout& layout, const BlockTensor& t,
                     slot_t slot, int cut, const ContractionPlan::Slab& slab,
                     ScratchBuffer& scratch, ScratchBuffer& fetched, WorkerTimeline& clock) {
  const double* stored = fetch_block(t, slot, fetched, clock);
  if (!layout.permute) return stored;
  clock.enter(Phase::permute, clock.task());
  const BlockShape& shape = t.shape();
  const int rank = shape.rank();
  const extent_t* extents = shape.block_extents(slot);
  if (cut < 0) {
    double* buf = scratch.get(shape.block_size(slot));
    kernels::permute(rank, extents, layout.axes, 1.0, stored, 0.0, buf);
    return buf;
  }
  extent_t strides[max_rank], view[max_rank], permuted[max_rank], dst_strides[max_rank];
  kernels::dense_strides(rank, extents, strides);
  std::copy_n(extents, rank, view);
  view[cut] = slab.last - slab.first;
  for (int j = 0; j < rank; ++j) permuted[j] = view[layout.axes[static_cast<std::size_t>(j)]];
  double* buf = scratch.get(kernels::dense_strides(rank, permuted, dst_strides));
  kernels::permute_strided(rank, view, strides, layout.axes, 1.0,
                           stored + slab.first * strides[cut], 0.0, buf, dst_strides);
  return buf;
}

// The tasks of one planned contraction, c += alpha * a * b; any worker runs any of them.
class PlanTasks {
 public:
  explicit PlanTasks(const BatchItem& item)
      : plan_(item.plan()), alpha_(item.alpha), a_(*item.a), b_(*item.b), c_(*item.c) {}

  void run(task_id_t t, Workspace& ws, WorkerTimeline& clock) const {
    const ContractionPlan::Task& task = plan_.tasks()[static_cast<std::size_t>(t)];
    if (task.last_member - task.first_member == 1)
      single(task, ws, clock);
    else
      stacked(task, ws, clock);
  }

 private:
  // One output block, or a slab of it: GEMMs straight into C when its layout allows, else
  // through R. A slab of rows reads rows [row0, row0 + rows) of A (a view of the block in place,
  // or the permuted slab) and writes those rows of R; a slab of columns likewise with B.
  void single(const ContractionPlan::Task& task, Workspace& ws, WorkerTimeline& clock) const {
    const ContractionPlan::Member& mem =
        plan_.members()[static_cast<std::size_t>(task.first_member)];
    const ContractionPlan::Window w = plan_.window(task);
    const auto output = plan_.output();
    const OutputBlock out = output_block(c_, mem.c_slot, ws.staged_c);
    double* cblock = out.data;
    const extent_t m = mem.m, n = task.n;
    const task_id_t id = clock.task();
    double* target = nullptr;
    extent_t ldc = 0;
    if (output == ContractionPlan::Output::buffered) {
      clock.enter(Phase::accumulate, id);
      target = ws.r.get(w.rows * w.cols);
      ldc = w.cols;
      std::fill_n(target, w.rows * w.cols, 0.0);
    } else if (output == ContractionPlan::Output::transposed) {
      target = cblock + w.col0 * m + w.row0;  // C is R^T, n x m
      ldc = m;
    } else {
      target = cblock + w.row0 * n + w.col0;
      ldc = n;
    }
    for (std::int64_t p = mem.first; p < mem.first + task.products; ++p) {
      const ContractionPlan::Product& pr = plan_.products()[static_cast<std::size_t>(p)];
      const ContractionPlan::Recipe& r = plan_.recipes()[static_cast<std::size_t>(pr.recipe)];
      const extent_t k = pr.k;
      const int a_cut = plan_.permuted_slab_axis(r, ContractionPlan::Side::rows, task);
      const int b_cut = plan_.permuted_slab_axis(r, ContractionPlan::Side::columns, task);
      const double* ma = matrix(r.a, a_, pr.a_slot, a_cut, task.slab, ws.a, ws.fetched_a, clock);
      const double* mb = matrix(r.b, b_, pr.b_slot, b_cut, task.slab, ws.b, ws.fetched_b, clock);
      // In place, a slab is a view of the whole matrix; permuted, it is compact.
      extent_t lda = r.a.trans ? m : k, ldb = r.b.trans ? k : n;
      if (a_cut >= 0)
        lda = k;
      else
        ma += r.a.trans ? w.row0 : w.row0 * k;
      if (b_cut >= 0)
        ldb = w.cols;
      else
        mb += r.b.trans ? w.col0 * k : w.col0;
      clock.enter(Phase::gemm, id);
      const double scale = alpha_ * pr.scale;
      if (output == ContractionPlan::Output::transposed)
        blas::gemm(!r.b.trans, !r.a.trans, w.cols, w.rows, k, scale, mb, ldb, ma, lda, 1.0, target,
                   ldc);
      else
        blas::gemm(r.a.trans, r.b.trans, w.rows, w.cols, k, scale, ma, lda, mb, ldb, 1.0, target,
                   ldc);
    }
    if (output != ContractionPlan::Output::buffered) {
      finish_output(c_, mem.c_slot, out, clock);
      return;
    }
    clock.enter(Phase::accumulate, id);
    const BlockShape& cs = c_.shape();
    extent_t extents[max_rank];
    plan_.r_extents(mem.c_slot, task, extents);
    if (task.slab.side == ContractionPlan::Side::whole) {
      kernels::permute(cs.rank(), extents, plan_.output_axes(), 1.0, target, 1.0, cblock);
      finish_output(c_, mem.c_slot, out, clock);
      return;
    }
    // The slab goes into its part of the block: a view with the block's strides.
    const int rank = cs.rank();
    extent_t c_strides[max_rank], r_strides[max_rank];
    kernels::dense_strides(rank, cs.block_extents(mem.c_slot), c_strides);
    kernels::dense_strides(rank, extents, r_strides);
    const int cut = plan_.output_positions()[static_cast<std::size_t>(
        task.slab.side == ContractionPlan::Side::rows ? 0 : plan_.row_labels())];
    kernels::permute_strided(rank, extents, r_strides, plan_.output_axes(), 1.0, target, 1.0,
                             cblock + task.slab.first * c_strides[cut], c_strides);
    finish_output(c_, mem.c_slot, out, clock);
  }

  // Several output blocks sharing their B blocks: per product, their A blocks (sign and weight
  // folded in) are stacked into one tall matrix and multiplied in one GEMM; the stacked result
  // is scattered into the output blocks at the end.
  void stacked(const ContractionPlan::Task& task, Workspace& ws, WorkerTimeline& clock) const {
    const ContractionPlan::Member* mem =
        &plan_.members()[static_cast<std::size_t>(task.first_member)];
    const auto& products = plan_.products();
    const auto& recipes = plan_.recipes();
    const std::int64_t count = task.last_member - task.first_member;
    const extent_t rows = task.rows, n = task.n;
    const int a_rank = a_.shape().rank();
    const task_id_t id = clock.task();
    clock.enter(Phase::accumulate, id);
    double* result = ws.r.get(rows * n);
    std::fill_n(result, rows * n, 0.0);
    for (std::int64_t p = 0; p < task.products; ++p) {
      const ContractionPlan::Product& lead = products[static_cast<std::size_t>(mem[0].first + p)];
      const ContractionPlan::Recipe& lr = recipes[static_cast<std::size_t>(lead.recipe)];
      const extent_t k = lead.k;
      clock.enter(Phase::permute, id);
      double* stack = ws.a.get(rows * k);
      for (std::int64_t g = 0; g < count; ++g) {
        const ContractionPlan::Product& pr = products[static_cast<std::size_t>(mem[g].first + p)];
        const ContractionPlan::Recipe& r = recipes[static_cast<std::size_t>(pr.recipe)];
        const double* block = fetch_block(a_, pr.a_slot, ws.fetched_a, clock);
        clock.enter(Phase::permute, id);
        kernels::permute(a_rank, a_.shape().block_extents(pr.a_slot), r.a_rows, pr.scale, block,
                         0.0, stack + mem[g].row_offset * k);
      }
      const double* mb = matrix(lr.b, b_, lead.b_slot, -1, task.slab, ws.b, ws.fetched_b, clock);
      clock.enter(Phase::gemm, id);
      blas::gemm(false, lr.b.trans, rows, n, k, alpha_, stack, k, mb, lr.b.trans ? k : n, 1.0,
                 result, n);
    }
    clock.enter(Phase::accumulate, id);
    extent_t extents[max_rank];
    for (std::int64_t g = 0; g < count; ++g) {
      const OutputBlock out = output_block(c_, mem[g].c_slot, ws.staged_c);
      plan_.r_extents(mem[g].c_slot, task, extents);
      kernels::permute(c_.shape().rank(), extents, plan_.output_axes(), 1.0,
                       result + mem[g].row_offset * n, 1.0, out.data);
      finish_output(c_, mem[g].c_slot, out, clock);
    }
  }

  const ContractionPlan& plan_;
  double alpha_;
  const BlockTensor &a_, &b_;
  BlockTensor& c_;
};

/**
 * The tasks of a batch, item after item, and the order that tasks of different items writing the
 * same output block keep: such a task may start once every task of the items before its own that
 * writes one of its blocks is done. Each block then receives its contributions in item order,
 * exactly as if the items ran one after another. Tasks writing blocks that no other item writes
 * wait for nothing, and neither do the tasks of one item among themselves (they never write the
 * same memory).
 */
class BatchTasks {
 public:
  BatchTasks(std::span<const BatchItem> items, bool refine) {
    offsets_.push_back(0);
    for (std::size_t i = 0; i < items.size(); ++i) {
      const auto costs = items[i].schedule->costs(refine);
      costs_.insert(costs_.end(), costs.begin(), costs.end());
      item_of_.insert(item_of_.end(), costs.size(), static_cast<std::int32_t>(i));
      offsets_.push_back(static_cast<task_id_t>(costs_.size()));
    }
    order_shared_blocks(items);
  }

  std::span<const double> costs() const { return costs_; }
  /** Each task's stage (TaskPool::stages): 0 for tasks that wait for none. */
  std::span<const std::int32_t> stages() const { return stages_; }
  /** Whether some task must wait for others. */
  bool ordered() const { return !done_.empty(); }
  std::int32_t item(task_id_t t) const { return item_of_[static_cast<std::size_t>(t)]; }
  /** The task's index in its item's plan. */
  task_id_t local(task_id_t t) const { return t - offsets_[static_cast<std::size_t>(item(t))]; }
  /** Where item `i`'s tasks start among the batch's. */
  task_id_t first(std::size_t i) const { return offsets_[i]; }

  bool ready(task_id_t t) const {
    for (const Wait& w : waits(t))
      if (done_[w.block].load(std::memory_order_acquire) < w.before) return false;
    return true;
  }
  /** Called by the task itself, once its blocks are written. */
  void finished(task_id_t t) {
    for (const Wait& w : waits(t)) done_[w.block].fetch_add(1, std::memory_order_release);
  }

 private:
  /** A shared block the task writes, and how many tasks writing it come before it. */
  struct Wait {
    std::size_t block = 0;  // index into done_
    std::int32_t before = 0;
  };

  std::span<const Wait> waits(task_id_t t) const {
    if (wait_starts_.empty()) return {};
    const auto i = static_cast<std::size_t>(t);
    return std::span<const Wait>(waits_).subspan(wait_starts_[i],
                                                 wait_starts_[i + 1] - wait_starts_[i]);
  }

  // visit(task of the batch, slot) for every output block the tasks of item `i` write.
  template <class Visit>
  void for_each_write(std::span<const BatchItem> items, std::size_t i, Visit&& visit) const {
    const ContractionPlan& plan = items[i].plan();
    const auto& tasks = plan.tasks();
    for (std::size_t t = 0; t < tasks.size(); ++t)
      for (std::int64_t g = tasks[t].first_member; g < tasks[t].last_member; ++g)
        visit(offsets_[i] + static_cast<task_id_t>(t),
              plan.members()[static_cast<std::size_t>(g)].c_slot);
  }

  void order_shared_blocks(std::span<const BatchItem> items) {
    // Per output tensor and block: the first item writing it; its counter in done_ (-1 while
    // one item alone writes it); then, item by item, the tasks that wrote it so far and the
    // latest stage among them.
    struct Output {
      std::vector<std::int32_t> first_writer;
      std::vector<std::int64_t> counter;
      std::vector<std::int32_t> written;
      std::vector<std::int32_t> stage;
    };
    std::map<const BlockTensor*, Output> outputs;
    for (const BatchItem& item : items) {
      Output& out = outputs[item.c];
      const auto blocks = static_cast<std::size_t>(item.c->shape().num_blocks());
      out.first_writer.assign(blocks, -1);
      out.counter.assign(blocks, -1);
      out.written.assign(blocks, 0);
      out.stage.assign(blocks, 0);
    }
    std::size_t counters = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      Output& out = outputs[items[i].c];
      for_each_write(items, i, [&](task_id_t, slot_t slot) {
        const auto s = static_cast<std::size_t>(slot);
        if (out.first_writer[s] < 0)
          out.first_writer[s] = static_cast<std::int32_t>(i);
        else if (out.first_writer[s] != static_cast<std::int32_t>(i) && out.counter[s] < 0)
          out.counter[s] = static_cast<std::int64_t>(counters++);
      });
    }
    if (counters == 0) return;
    done_ = std::vector<std::atomic<std::int32_t>>(counters);
    wait_starts_.assign(costs_.size() + 1, 0);
    stages_.assign(costs_.size(), 0);
    for (std::size_t i = 0; i < items.size(); ++i) {
      Output& out = outputs[items[i].c];
      // A task's stage is one after the latest of the tasks it waits for.
      for_each_write(items, i, [&](task_id_t t, slot_t slot) {
        const auto s = static_cast<std::size_t>(slot);
        const auto at = static_cast<std::size_t>(t);
        if (out.counter[s] >= 0)
          waits_.push_back({static_cast<std::size_t>(out.counter[s]), out.written[s]});
        if (out.written[s] > 0) stages_[at] = std::max(stages_[at], out.stage[s] + 1);
        wait_starts_[at + 1] = waits_.size();
      });
      for_each_write(items, i, [&](task_id_t t, slot_t slot) {
        const auto s = static_cast<std::size_t>(slot);
        ++out.written[s];
        out.stage[s] = std::max(out.stage[s], stages_[static_cast<std::size_t>(t)]);
      });
    }
  }

  std::vector<task_id_t> offsets_;  // item i's tasks are [offsets_[i], offsets_[i + 1])
  std::vector<std::int32_t> item_of_;
  std::vector<double> costs_;
  std::vector<std::size_t> wait_starts_;  // task t's waits are waits_[wait_starts_[t], [t + 1])
  std::vector<Wait> waits_;
  std::vector<std::int32_t> stages_;             // empty when no task waits
  std::vector<std::atomic<std::int32_t>> done_;  // per shared block, the tasks done writing it
};

/** The blocks each task of a batch reads and writes (TaskPool::blocks), for a policy that wants
 *  them: block ids number the blocks of the batch's distinct tensors one tensor after another,
 *  in the order the items name them (A, B, C). */
class BatchBlocks {
 public:
  explicit BatchBlocks(std::span<const BatchItem> items) {
    std::map<const BlockTensor*, std::int64_t> first_id;
    auto base = [&](const BlockTensor* t) {
      const auto [at, added] = first_id.try_emplace(t, static_cast<std::int64_t>(bytes_.size()));
      if (added)
        for (slot_t s = 0; s < t->shape().num_blocks(); ++s)
          bytes_.push_back(t->shape().block_size(s) * static_cast<extent_t>(sizeof(double)));
      return at->second;
    };
    offsets_.push_back(0);
    std::vector<std::int64_t> reads, writes;
    for (const BatchItem& item : items) {
      const std::array<std::int64_t, 3> first = {base(item.a), base(item.b), base(item.c)};
      const ContractionPlan& plan = item.plan();
      task_id_t current = 0;
      auto end_task = [&] {
        append(reads, 0);
        append(writes, 1);
        reads.clear();
        writes.clear();
        offsets_.push_back(static_cast<std::int64_t>(blocks_.size()));
      };
      for_each_task_block(
          plan, [&](task_id_t task, TaskBlockHypergraph::Tensor tensor, slot_t slot) {
            for (; current < task; ++current) end_task();
            const std::int64_t id = first[static_cast<std::size_t>(tensor)] + slot;
            (tensor == TaskBlockHypergraph::Tensor::c ? writes : reads).push_back(id);
          });
      for (; current < static_cast<task_id_t>(plan.tasks().size()); ++current) end_task();
    }
  }
  TaskBlocks view() const { return {offsets_, blocks_, writes_, bytes_}; }

 private:
  // The distinct ids of `ids`, ascending, marked as written or read.
  void append(std::vector<std::int64_t>& ids, std::uint8_t written) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    blocks_.insert(blocks_.end(), ids.begin(), ids.end());
    writes_.insert(writes_.end(), ids.size(), written);
  }
  std::vector<std::int64_t> offsets_, blocks_, bytes_;
  std::vector<std::uint8_t> writes_;
};

void check_item(const BatchItem& item, std::span<const BatchItem> items) {
  const ContractionPlan& plan = item.plan();
  check_operand(plan.a(), *item.a);
  check_operand(plan.b(), *item.b);
  check_operand(plan.c(), *item.c);
  TILECC_CHECK(item.c != item.a && item.c != item.b, "the output ", detail::show(plan.c()),
               " is also an operand; write into a new tensor and copy it back.");
  for (const BatchItem& other : items)
    TILECC_CHECK(other.c != item.a && other.c != item.b, "the operand of ", plan.expression(),
                 " is the output of ", other.plan().expression(),
                 " in the same batch; run them one after the other.");
}

// Each item's task times (kept in its schedule, for refinement) and flops, from the run's.
void record_items(std::span<const BatchItem> items, const BatchTasks& tasks, BatchStats& stats) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    Schedule& schedule = *items[i].schedule;
    const auto first = stats.run.task_seconds.begin() + tasks.first(i);
    std::vector<double> seconds(
        first, first + static_cast<std::ptrdiff_t>(schedule.plan().tasks().size()));
    schedule.record_measured(seconds);
    stats.item_task_seconds.push_back(std::move(seconds));
    stats.item_flops.push_back(schedule.plan().executed_flops());
  }
}

// A batch on several ranks (see contract_batch). No task waits for another: every result is
// accumulated into its owner, atomically, so the order of the contributions to a block changes
// only its rounding.
// WorkQ's courier for a batch (workq.hpp): the operand blocks each of the batch's tasks reads,
// fetched into their stores' caches when asked, all let go at the end of the run; the updates of
// the batch's results posted to it.
class BatchCourier {
 public:
  BatchCourier(std::span<const BatchItem> items, const BatchTasks& tasks) {
    reads_offset_.push_back(0);
    for (std::size_t i = 0; i < items.size(); ++i) {
      BlockStore* written = &items[i].c->store();
      if (std::find(written_.begin(), written_.end(), written) == written_.end())
        written_.push_back(written);
      const BlockStore* stores[2] = {&items[i].a->store(), &items[i].b->store()};
      task_id_t last = -1;
      for_each_task_block(items[i].plan(),
                          [&](task_id_t t, TaskBlockHypergraph::Tensor tensor, slot_t slot) {
                            for (; last < t; ++last) reads_offset_.push_back(reads_offset_.back());
                            if (tensor == TaskBlockHypergraph::Tensor::c) return;
                            reads_.push_back({stores[static_cast<int>(tensor)], slot});
                            ++reads_offset_.back();
                          });
      const task_id_t tasks_of_item = tasks.first(i + 1) - tasks.first(i);
      for (; last + 1 < tasks_of_item; ++last) reads_offset_.push_back(reads_offset_.back());
    }
  }

  Courier courier(int depth, bool sends_updates, bool workers_fetch_when_idle) {
    Courier c;
    c.depth = depth;
    c.workers_fetch_when_idle = workers_fetch_when_idle;
    c.fetch = [this](std::span<const task_id_t> tasks) { fetch(tasks); };
    c.release = [this] {
      for (auto& [store, slots] : fetched_) store->release(slots);
      fetched_.clear();
    };
    if (sends_updates)
      c.hand_over = [this](Outbox* outbox) {
        for (BlockStore* store : written_) store->post_updates_to(outbox);
      };
    return c;
  }

 private:
  struct Read {
    const BlockStore* store;
    slot_t slot;
  };
  void fetch(std::span<const task_id_t> tasks) {
    std::map<const BlockStore*, std::vector<slot_t>> now;
    for (const task_id_t t : tasks)
      for (auto r = reads_offset_[static_cast<std::size_t>(t)];
           r < reads_offset_[static_cast<std::size_t>(t) + 1]; ++r)
        now[reads_[static_cast<std::size_t>(r)].store].push_back(
            reads_[static_cast<std::size_t>(r)].slot);
    for (auto& [store, slots] : now) {
      store->prefetch(slots);
      auto& all = fetched_[store];
      all.insert(all.end(), slots.begin(), slots.end());
    }
  }
  std::vector<Read> reads_;
  std::vector<std::int64_t> reads_offset_;  // per batch task, into reads_
  std::map<const BlockStore*, std::vector<slot_t>> fetched_;
  std::vector<BlockStore*> written_;
};

// Keeps the remote blocks the batch's operand stores fetch while it lives (BlockStore::
// keep_fetched), unless the communicator says every task gets its own (Communicator::fetch_once).
class KeptFetches {
 public:
  KeptFetches(std::span<const BatchItem> items, const Communicator& comm) {
    if (!comm.fetch_once()) return;
    for (const BatchItem& item : items)
      for (const BlockStore* store : {&item.a->store(), &item.b->store()})
        if (std::find(stores_.begin(), stores_.end(), store) == stores_.end()) {
          store->keep_fetched(true);
          stores_.push_back(store);
        }
  }
  KeptFetches(const KeptFetches&) = delete;
  KeptFetches& operator=(const KeptFetches&) = delete;
  ~KeptFetches() {
    for (const BlockStore* store : stores_) store->keep_fetched(false);
  }

 private:
  std::vector<const BlockStore*> stores_;
};

BatchStats run_distributed(std::span<const BatchItem> items, Executor& executor,
                           const BatchTasks& tasks, const Executor::Body& body,
                           const Communicator& comm, int workq_depth) {
  TaskPool pool{tasks.costs(), {}, static_cast<int>(items.size()), {}};
  if (items.size() == 1) pool.loop = items[0].plan().loop();
  const bool threaded_blas = items.size() == 1 && uses_threaded_blas(items[0].plan(), executor);
  BatchStats stats;
  // A placement applies when every item has one (each item's, in the batch's order of tasks).
  std::vector<int> placement;
  if (std::all_of(items.begin(), items.end(),
                  [](const BatchItem& item) { return !item.schedule->placement().empty(); }))
    for (const BatchItem& item : items)
      placement.insert(placement.end(), item.schedule->placement().begin(),
                       item.schedule->placement().end());
  std::optional<BatchCourier> batch_courier;
  std::optional<Courier> courier;
  if (workq_depth > 0) {
    batch_courier.emplace(items, tasks);
    courier = batch_courier->courier(workq_depth, comm.courier_sends_updates(),
                                     comm.workers_fetch_when_idle());
  }
  // A rank gets each remote operand block once: the first task that needs it (or WorkQ's
  // courier) keeps it for the rank's others, until the batch ends (its operands may change after
  // it).
  const KeptFetches kept(items, comm);
  stats.run = run_across_ranks(executor, pool, body, comm, threaded_blas, placement,
                               courier ? &*courier : nullptr);
  std::vector<BlockTensor*> outputs;
  for (const BatchItem& item : items)
    if (std::find(outputs.begin(), outputs.end(), item.c) == outputs.end())
      outputs.push_back(item.c);
  for (BlockTensor* c : outputs) c->store().complete_writes();
  record_items(items, tasks, stats);
  return stats;
}

// Adds a run of some of a batch's tasks (`ran[k]` is the batch task the run's task k was) to the
// batch's whole run: times and phases summed, task times where they belong.
void add_part(RunStats& whole, const RunStats& part, std::span<const task_id_t> ran) {
  if (whole.tasks == 0 && whole.seconds == 0.0) whole.start = part.start;
  whole.tasks += part.tasks;
  whole.seconds += part.seconds;
  whole.shared_calls += part.shared_calls;
  const auto add = [](std::vector<PhaseSeconds>& into, const std::vector<PhaseSeconds>& from) {
    if (into.size() < from.size()) into.resize(from.size());
    for (std::size_t w = 0; w < from.size(); ++w)
      for (std::size_t p = 0; p < from[w].size(); ++p) into[w][p] += from[w][p];
  };
  add(whole.phases, part.phases);
  add(whole.segment_phases, part.segment_phases);
  for (std::size_t k = 0; k < ran.size(); ++k)
    whole.task_seconds[static_cast<std::size_t>(ran[k])] = part.task_seconds[k];
}

enum class Hold : std::uint8_t { take, drop, cache };

// Takes blocks of an item's operands into memory, drops them, or lets them stay as cache.
void hold(const BatchItem& item, std::span<const StagedBlock> blocks, Hold how) {
  const BlockStore* stores[3] = {&item.a->store(), &item.b->store(), &item.c->store()};
  std::vector<slot_t> slots[3];
  for (const StagedBlock& b : blocks) slots[static_cast<int>(b.tensor)].push_back(b.slot);
  for (int x = 0; x < 3; ++x) {
    if (slots[x].empty()) continue;
    if (how == Hold::take)
      stores[x]->stage(slots[x]);
    else
      stores[x]->release(slots[x], how == Hold::cache);
  }
}

// A courier (WorkQ's, paper 003, on one node): takes in, as far as memory has room beside what
// is held, the blocks the next step will hold, while this step's tasks run. What it took is
// released once the next step holds it itself; what it could not take the step reads then.
class Courier {
 public:
  Courier(const BatchItem& item, std::vector<StagedBlock> ahead)
      : item_(&item), ahead_(std::move(ahead)) {
    if (!ahead_.empty()) thread_ = std::thread([this] { fetch(); });
  }
  Courier(const Courier&) = delete;
  Courier& operator=(const Courier&) = delete;
  ~Courier() {
    if (thread_.joinable()) thread_.join();
  }
  /** Waits for the courier; the blocks it took, now held twice, are let go once. */
  void hand_over() {
    if (thread_.joinable()) thread_.join();
    if (error_) std::rethrow_exception(error_);
    hold(*item_, taken_, Hold::cache);
    taken_.clear();
  }

 private:
  void fetch() {
    try {
      const BlockStore* stores[3] = {&item_->a->store(), &item_->b->store(), &item_->c->store()};
      for (const StagedBlock& b : ahead_) {
        const BlockStore::Ahead got = stores[static_cast<int>(b.tensor)]->stage_ahead(b.slot);
        if (got == BlockStore::Ahead::no_room) break;
        if (got == BlockStore::Ahead::taken) taken_.push_back(b);
      }
    } catch (...) {
      error_ = std::current_exception();
    }
  }
  const BatchItem* item_;
  std::vector<StagedBlock> ahead_, taken_;
  std::exception_ptr error_;
  std::thread thread_;
};

// The blocks taken in at the start of step `step` of stage `stage` (its stage's shared ones too
// when it is the stage's first), or none past the end.
std::vector<StagedBlock> intake(const Staging& staging, std::size_t stage, std::size_t step) {
  if (stage < staging.size() && step == staging[stage].steps.size()) ++stage, step = 0;
  if (stage >= staging.size()) return {};
  std::vector<StagedBlock> blocks;
  if (step == 0) blocks = staging[stage].shared;
  const auto& own = staging[stage].steps[step].blocks;
  blocks.insert(blocks.end(), own.begin(), own.end());
  return blocks;
}

// A batch with stage schedules (see staging.hpp): item after item, each through its stages (an
// item without one runs whole), so every block a running task touches is held in memory and the
// blocks move only when the schedules say; a courier reads the next step's in while a step runs.
BatchStats run_staged(std::span<const BatchItem> items, Executor& executor, const BatchTasks& tasks,
                      const Executor::Body& body) {
  BatchStats stats;
  stats.run.task_seconds.assign(tasks.costs().size(), 0.0);
  std::vector<task_id_t> ran;
  std::vector<double> costs;
  const auto run = [&] {
    costs.clear();
    for (const task_id_t t : ran) costs.push_back(tasks.costs()[static_cast<std::size_t>(t)]);
    const TaskPool pool{costs, {}, static_cast<int>(items.size()), {}};
    const RunStats part = executor.run(
        pool, [&](task_id_t k, int worker) { body(ran[static_cast<std::size_t>(k)], worker); });
    add_part(stats.run, part, ran);
  };
  for (std::size_t i = 0; i < items.size(); ++i) {
    const task_id_t first = tasks.first(i);
    const Staging& staging = items[i].schedule->staging();
    if (staging.empty()) {
      ran.resize(static_cast<std::size_t>(tasks.first(i + 1) - first));
      std::iota(ran.begin(), ran.end(), first);
      run();
      continue;
    }
    // What the last step holds stays as cache for whatever runs next (the schedule's I/O is
    // its own from a cold start; the next contraction may find some of its blocks in memory).
    std::optional<Courier> courier;
    for (std::size_t s = 0; s < staging.size(); ++s) {
      const Stage& stage = staging[s];
      const bool last_stage = s + 1 == staging.size();
      hold(items[i], stage.shared, Hold::take);
      for (std::size_t k = 0; k < stage.steps.size(); ++k) {
        const StageStep& step = stage.steps[k];
        hold(items[i], step.blocks, Hold::take);
        if (courier) courier->hand_over();
        // The next step's blocks may need the room of this step's own, which are let go
        // after it: the courier takes what fits now.
        courier.emplace(items[i], intake(staging, s, k + 1));
        ran.clear();
        for (const task_id_t t : step.tasks) ran.push_back(first + t);
        run();
        const bool last = last_stage && k + 1 == stage.steps.size();
        hold(items[i], step.blocks, last ? Hold::cache : Hold::drop);
      }
      hold(items[i], stage.shared, last_stage ? Hold::cache : Hold::drop);
    }
    if (courier) courier->hand_over();
  }
  record_items(items, tasks, stats);
  return stats;
}

}  // namespace

BatchStats contract_batch(std::span<const BatchItem> items, Executor& executor, bool refine,
                          const Communicator* comm, int workq_depth) {
  for (const BatchItem& item : items) check_item(item, items);
  blas::ensure_loaded();
  const std::vector<PlanTasks> runners(items.begin(), items.end());
  BatchTasks tasks(items, refine);
  auto body = [&](task_id_t t, int worker) {
    WorkerTimeline& clock = executor.timeline(worker);
    const std::int32_t item = tasks.item(t);
    const task_id_t local = tasks.local(t);
    clock.label(item, local);
    runners[static_cast<std::size_t>(item)].run(local, executor.workspace(worker), clock);
    if (tasks.ordered()) tasks.finished(t);
  };
  const Executor::Ready ready = [&](task_id_t t) { return tasks.ready(t); };
  if (comm != nullptr && comm->size() > 1)
    return run_distributed(items, executor, tasks, body, *comm, workq_depth);
  if (std::any_of(items.begin(), items.end(),
                  [](const BatchItem& item) { return !item.schedule->staging().empty(); }))
    return run_staged(items, executor, tasks, body);
  TaskPool pool{tasks.costs(), {}, static_cast<int>(items.size()), tasks.stages()};
  std::optional<BatchBlocks> blocks;
  TaskBlocks blocks_view;
  if (executor.policy_wants_blocks()) {
    blocks.emplace(items);
    blocks_view = blocks->view();
    pool.blocks = &blocks_view;
  }
  const bool alone = items.size() == 1;
  if (alone) pool.loop = items[0].plan().loop();  // the TCE baseline runs one loop at a time
  BatchStats stats;
  if (alone && uses_threaded_blas(items[0].plan(), executor))
    stats.run = executor.run_with_threaded_blas(pool, body);
  else
    stats.run = executor.run(pool, body, tasks.ordered() ? &ready : nullptr);
  record_items(items, tasks, stats);
  return stats;
}

ContractStats contract(Schedule& schedule, double alpha, const BlockTensor& a, const BlockTensor& b,
                       BlockTensor& c, Executor& executor, bool refine) {
  const BatchItem item{&schedule, alpha, &a, &b, &c};
  BatchStats batch = contract_batch({&item, 1}, executor, refine);
  ContractStats stats;
  stats.run = std::move(batch.run);
  stats.flops = batch.item_flops[0];
  return stats;
}

ContractStats contract(const ContractionPlan& plan, double alpha, const BlockTensor& a,
                       const BlockTensor& b, BlockTensor& c, Executor& executor) {
  Schedule schedule(plan);
  return contract(schedule, alpha, a, b, c, executor, false);
}

bool uses_threaded_blas(const ContractionPlan& plan, const Executor& executor) {
  const auto tasks = static_cast<double>(std::max<std::size_t>(1, plan.tasks().size()));
  const double threshold = executor.policy_options().blas_parallel_task_flops;
  return executor.threads() > 1 && threshold > 0 && plan.executed_flops() / tasks >= threshold;
}

RunStats run_empty_tasks(task_id_t tasks, Executor& executor) {
  const std::vector<double> costs(static_cast<std::size_t>(tasks), 1.0);
  return executor.run({costs}, [](task_id_t, int) {});
}

}  // namespace tilecc
