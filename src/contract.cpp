#include "tilecc/contract.hpp"

#include <algorithm>

#include "detail/labels.hpp"
#include "tilecc/blas.hpp"
#include "tilecc/error.hpp"
#include "tilecc/kernels/permute.hpp"

namespace tilecc {
namespace {

void check_operand(const Operand& planned, const BlockTensor& t) {
  TILECC_CHECK(planned.shape == t.shape_ptr() || *planned.shape == t.shape(), "tensor given for ",
               detail::show(planned), " has shape ", t.shape().describe(),
               " but the plan was made for ", planned.shape->describe(), "; make a new plan.");
}

// Pointer to the operand block as a GEMM matrix: in place, or permuted into scratch. With `cut`
// (a stored axis) >= 0, only the indices [first, last) of that axis are permuted: a slab.
const double* matrix(const ContractionPlan::OperandLayout& layout, const BlockTensor& t,
                     slot_t slot, int cut, const ContractionPlan::Slab& slab,
                     ScratchBuffer& scratch, WorkerTimeline& clock) {
  const double* stored = t.block(slot);
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

}  // namespace

ContractStats contract(ContractionPlan& plan, double alpha, const BlockTensor& a,
                       const BlockTensor& b, BlockTensor& c, Executor& executor, bool refine) {
  check_operand(plan.a(), a);
  check_operand(plan.b(), b);
  check_operand(plan.c(), c);
  TILECC_CHECK(&c != &a && &c != &b, "the output ", detail::show(plan.c()),
               " is also an operand; write into a new tensor and copy it back.");
  blas::ensure_loaded();
  ContractStats stats;
  const auto& tasks = plan.tasks();
  const auto& products = plan.products();
  const auto& recipes = plan.recipes();
  const BlockShape& cs = c.shape();
  const auto output = plan.output();

  const auto& members = plan.members();
  const int a_rank = a.shape().rank();

  // One output block, or a slab of it: GEMMs straight into C when its layout allows, else
  // through R. A slab of rows reads rows [row0, row0 + rows) of A (a view of the block in place,
  // or the permuted slab) and writes those rows of R; a slab of columns likewise with B.
  auto single = [&](const ContractionPlan::Task& task, Workspace& ws, WorkerTimeline& clock) {
    const ContractionPlan::Member& mem = members[static_cast<std::size_t>(task.first_member)];
    const ContractionPlan::Window w = plan.window(task);
    double* cblock = c.block(mem.c_slot);
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
      const ContractionPlan::Product& pr = products[static_cast<std::size_t>(p)];
      const ContractionPlan::Recipe& r = recipes[static_cast<std::size_t>(pr.recipe)];
      const extent_t k = pr.k;
      const int a_cut = plan.permuted_slab_axis(r, ContractionPlan::Side::rows, task);
      const int b_cut = plan.permuted_slab_axis(r, ContractionPlan::Side::columns, task);
      const double* ma = matrix(r.a, a, pr.a_slot, a_cut, task.slab, ws.a, clock);
      const double* mb = matrix(r.b, b, pr.b_slot, b_cut, task.slab, ws.b, clock);
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
      const double scale = alpha * pr.scale;
      if (output == ContractionPlan::Output::transposed)
        blas::gemm(!r.b.trans, !r.a.trans, w.cols, w.rows, k, scale, mb, ldb, ma, lda, 1.0, target,
                   ldc);
      else
        blas::gemm(r.a.trans, r.b.trans, w.rows, w.cols, k, scale, ma, lda, mb, ldb, 1.0, target,
                   ldc);
    }
    if (output == ContractionPlan::Output::buffered) {
      clock.enter(Phase::accumulate, id);
      extent_t extents[max_rank];
      plan.r_extents(mem.c_slot, task, extents);
      if (task.slab.side == ContractionPlan::Side::whole) {
        kernels::permute(cs.rank(), extents, plan.output_axes(), 1.0, target, 1.0, cblock);
      } else {
        // The slab goes into its part of the block: a view with the block's strides.
        const int rank = cs.rank();
        extent_t c_strides[max_rank], r_strides[max_rank];
        kernels::dense_strides(rank, cs.block_extents(mem.c_slot), c_strides);
        kernels::dense_strides(rank, extents, r_strides);
        const int cut = plan.output_positions()[static_cast<std::size_t>(
            task.slab.side == ContractionPlan::Side::rows ? 0 : plan.row_labels())];
        kernels::permute_strided(rank, extents, r_strides, plan.output_axes(), 1.0, target, 1.0,
                                 cblock + task.slab.first * c_strides[cut], c_strides);
      }
    }
  };

  // Several output blocks sharing their B blocks: per product, their A blocks (sign and weight
  // folded in) are stacked into one tall matrix and multiplied in one GEMM; the stacked result
  // is scattered into the output blocks at the end.
  auto stacked = [&](const ContractionPlan::Task& task, Workspace& ws, WorkerTimeline& clock) {
    const ContractionPlan::Member* mem = &members[static_cast<std::size_t>(task.first_member)];
    const std::int64_t count = task.last_member - task.first_member;
    const extent_t rows = task.rows, n = task.n;
    const task_id_t id = clock.task();
    clock.enter(Phase::accumulate, id);
    double* result = ws.r.get(rows * n);
    std::fill_n(result, rows * n, 0.0);
    extent_t extents[max_rank];
    for (std::int64_t p = 0; p < task.products; ++p) {
      const ContractionPlan::Product& lead = products[static_cast<std::size_t>(mem[0].first + p)];
      const ContractionPlan::Recipe& lr = recipes[static_cast<std::size_t>(lead.recipe)];
      const extent_t k = lead.k;
      clock.enter(Phase::permute, id);
      double* stack = ws.a.get(rows * k);
      for (std::int64_t g = 0; g < count; ++g) {
        const ContractionPlan::Product& pr = products[static_cast<std::size_t>(mem[g].first + p)];
        const ContractionPlan::Recipe& r = recipes[static_cast<std::size_t>(pr.recipe)];
        kernels::permute(a_rank, a.shape().block_extents(pr.a_slot), r.a_rows, pr.scale,
                         a.block(pr.a_slot), 0.0, stack + mem[g].row_offset * k);
      }
      const double* mb = matrix(lr.b, b, lead.b_slot, -1, task.slab, ws.b, clock);
      clock.enter(Phase::gemm, id);
      blas::gemm(false, lr.b.trans, rows, n, k, alpha, stack, k, mb, lr.b.trans ? k : n, 1.0,
                 result, n);
    }
    clock.enter(Phase::accumulate, id);
    for (std::int64_t g = 0; g < count; ++g) {
      plan.r_extents(mem[g].c_slot, task, extents);
      kernels::permute(cs.rank(), extents, plan.output_axes(), 1.0, result + mem[g].row_offset * n,
                       1.0, c.block(mem[g].c_slot));
    }
  };

  auto body = [&](task_id_t t, int worker) {
    const ContractionPlan::Task& task = tasks[static_cast<std::size_t>(t)];
    Workspace& ws = executor.workspace(worker);
    WorkerTimeline& clock = executor.timeline(worker);
    if (task.last_member - task.first_member == 1)
      single(task, ws, clock);
    else
      stacked(task, ws, clock);
  };
  const double mean_task_flops =
      tasks.empty() ? 0.0 : plan.executed_flops() / static_cast<double>(tasks.size());
  const double threshold = executor.policy_options().blas_parallel_task_flops;
  const TaskPool pool{plan.costs(refine), plan.loop()};
  if (executor.threads() > 1 && threshold > 0 && mean_task_flops >= threshold)
    stats.run = executor.run_with_threaded_blas(pool, body);
  else
    stats.run = executor.run(pool, body);
  plan.record_measured(stats.run.task_seconds);
  stats.flops = plan.executed_flops();
  return stats;
}

RunStats run_empty_tasks(task_id_t tasks, Executor& executor) {
  const std::vector<double> costs(static_cast<std::size_t>(tasks), 1.0);
  return executor.run({costs}, [](task_id_t, int) {});
}

}  // namespace tilecc
