#pragma once
/** @file ContractionPlan: the inspector. A contraction C[lc] += alpha * A[la] * B[lb] becomes a
 * list of tasks, one per canonical non-zero output block, each with the non-zero block products
 * that feed it. The plan depends on the operands' shapes and the number of workers only, so one
 * plan serves every execution on tensors of the same shapes (every CC iteration).
 */
#include <limits>
#include <memory_resource>
#include <span>
#include <string>
#include <vector>

#include "tilecc/cost.hpp"
#include "tilecc/shape.hpp"

namespace tilecc {

using LabelList = std::vector<std::string>;

/** How a plan cuts its work into tasks. */
enum class PlanLayout {
  /// The inspector's tasks: output blocks that share B blocks stacked into one task.
  inspector,
  /// NWChem TCE's tasks: one per output block, in loop order, with the loop's null tuples kept
  /// (ContractionPlan::loop()) so that the `tce` policy can pay for them as TCE did.
  tce,
  /// Tasks for stage schedules under a memory budget (staging.hpp): one per output block (or
  /// slab of one), never stacked, so that the blocks one task holds are few.
  staged,
};

/** A tensor's shape with the labels of its indices in an expression, and its name for messages. */
struct Operand {
  ShapePtr shape;
  LabelList labels;
  std::string name;
};

/**
 * The tasks of C[lc] += alpha * A[la] * B[lb].
 *
 * Labels in A and C are rows (M), labels in B and C columns (N), labels in A and B are summed (K).
 * Rules, each enforced with a clear error: labels are unique within an operand; every label has
 * one space wherever it appears; every output label comes from exactly one operand (no batched /
 * Hadamard labels); every operand label is either summed or in the output (no traces).
 *
 * What the inspector saves:
 *  - only canonical output blocks become tasks, and only non-zero (A block, B block) pairs
 *    become products (null tasks and zero blocks cost nothing);
 *  - summed labels that both operands treat symmetrically (the group H of label permutations
 *    realised by a symmetry of A and, with the same sign, of B) are summed over one tile tuple per
 *    H-orbit, weighted by the orbit's size: 0.5 * t[ijcd] v[abcd] runs over tile(c) <= tile(d)
 *    only. If a permutation in both groups has opposite signs the contraction is zero and the
 *    plan has no tasks;
 *  - each product is one GEMM; an operand is permuted into GEMM layout only when its stored block
 *    cannot be used in place (possibly transposed), and the result goes straight into the output
 *    block whenever the output's index order is rows-then-columns (or columns-then-rows).
 *
 * @code
 *   ContractionPlan plan({r2, {"i","j","a","b"}, "r2"}, {t2, {"i","j","c","d"}, "t2"},
 *                        {v, {"a","b","c","d"}, "v"});
 *   plan.executed_flops() / plan.dense_flops();   // the fraction symmetry leaves to do
 * @endcode
 */
class ContractionPlan {
 public:
  /** How to read one operand block as a GEMM matrix. */
  struct OperandLayout {
    bool permute = false;  ///< copy into scratch as stored.transpose(axes) first
    bool trans = false;    ///< (in place) the stored block is the transposed matrix
    Axes axes{};
  };
  struct Recipe {
    OperandLayout a, b;
    Axes a_rows{};  ///< stored A -> [rows, summed] in this recipe's summed order (for stacking)
  };
  /** One non-zero (A block, B block) pair feeding an output block: one GEMM, or in a stacked
   *  task a row block of the GEMM its members' products at this position share. The slots are
   *  kept in 32 bits (a shape has at most BlockShape::max_tile_tuples blocks), which makes it 32
   *  bytes rather than 40: a plan holds one per pair, and the inspector writes them into memory
   *  it has just taken. */
  struct Product {
    std::int32_t a_slot = 0, b_slot = 0;
    std::int32_t recipe = 0;
    double scale = 1.0;  ///< signs of both operand blocks times the H-orbit weight
    extent_t k = 0;
  };
  static_assert(BlockShape::max_tile_tuples <= std::numeric_limits<std::int32_t>::max());
  /** One output block of a task: its products are [first, first + Task::products). */
  struct Member {
    slot_t c_slot = 0;
    std::int64_t first = 0;
    extent_t m = 0;           ///< rows of this block's GEMM result
    extent_t row_offset = 0;  ///< where its rows start in the task's stacked result
  };
  /** Which part of its one output block a task computes: all of it, or a slab of it, the indices
   *  [first, last) of the block's first row label or of its first column label (in C's order). */
  enum class Side : std::int8_t { whole, rows, columns };
  struct Slab {
    Side side = Side::whole;
    extent_t first = 0, last = 0;
  };
  /**
   * A task: one output block, a slab of one, or several blocks whose products read the same B
   * blocks in the same order (same columns, same summed tiles). Stacking their rows turns many thin
   * GEMMs, each streaming a B block for a few rows, into one GEMM per B block: how
   * point-group-blocked codes (Psi4's DPD) keep GEMMs large when symmetry makes blocks small.
   * Blocks stack only where the cost model prices it cheaper, since each A block is then copied
   * into the stacked matrix: large blocks that GEMM could read in place stay alone.
   */
  struct Task {
    std::int64_t first_member = 0, last_member = 0;  ///< members [first, last)
    std::int64_t products = 0;                       ///< products per member
    extent_t rows = 0, n = 0;                        ///< stacked result is rows x n
    double flops = 0.0;
    Slab slab;  ///< a slab of a single output block (never of stacked ones)
  };
  /** The part of R[M, N] (rows x n of the task's result) that a task computes. */
  struct Window {
    extent_t row0 = 0, rows = 0, col0 = 0, cols = 0;
  };
  /** Where GEMM results go: straight into C (rows-then-columns), into C computing C^T = B^T A^T
   *  (columns-then-rows), or into scratch R[M, N] that is permuted into C once per task. */
  enum class Output { direct, transposed, buffered };

  /** `workers`: how many workers will share the tasks. With several, no task holds more than
   *  1 / (tasks_per_worker * workers) of the flops where the blocks allow it: stacking stops
   *  short of that share, and an output block above it is cut into slabs of its first row or
   *  column index (on a side whose unsliced operand is read in place when there is one; where
   *  both operands are permuted, into at most one slab per worker, since each slab permutes the
   *  unsliced operand again). With one worker, stacking is limited by rows only and nothing is
   *  cut. */
  ContractionPlan(Operand c, Operand a, Operand b, PlanLayout layout = PlanLayout::inspector,
                  const CostModel& model = {}, int workers = 1);

  const Operand& c() const { return c_; }
  const Operand& a() const { return a_; }
  const Operand& b() const { return b_; }

  const std::vector<Task>& tasks() const { return tasks_; }
  const std::vector<Member>& members() const { return members_; }
  const std::vector<Product>& products() const { return products_; }
  const std::vector<Recipe>& recipes() const { return recipes_; }
  PlanLayout layout() const { return layout_; }
  /** For PlanLayout::tce: every output tile tuple the TCE loop nest visits (canonical under the
   *  output's permutational symmetry), in loop order, holding its task or -1 when it is null. */
  const std::vector<task_id_t>& loop() const { return loop_; }

  /** The cost model's predicted seconds for each task, in the order of tasks(). What changes
   *  from run to run (the correction, measured times) lives in a Schedule beside the plan. */
  const std::vector<double>& modelled_seconds() const { return modelled_; }
  Output output() const { return output_; }
  /** Rows and columns of R[M, N] that `task` computes (all of them unless it is a slab). */
  Window window(const Task& task) const;
  /** The axis of the stored operand block (A for Side::rows, B for Side::columns) that the
   *  task's slab cuts when `recipe` permutes that operand into scratch, else -1 (no slab on that
   *  side, or the operand is read in place, as a view). */
  int permuted_slab_axis(const Recipe& recipe, Side side, const Task& task) const;
  /** Extents, by R's axes, of the task's part of R[M, N] for its output block `c_slot`. */
  void r_extents(slot_t c_slot, const Task& task, extent_t* extents) const;
  /** How many of C's labels come from A (the row labels, M). */
  int row_labels() const { return row_labels_; }
  /** A block's rows-then-columns result R[M, N] is C = R.transpose(output_axes()). */
  const Axes& output_axes() const { return output_axes_; }
  /** Position in C of each axis of R[M, N] (C's rank of entries): output_axes() inverted. */
  const Axes& output_positions() const { return r_positions_; }

  /** 2 * prod(label extents): the flops of the dense contraction without any symmetry. */
  double dense_flops() const { return dense_flops_; }
  /** Flops of the GEMMs this plan runs. */
  double executed_flops() const { return executed_flops_; }
  /** True when a symmetry shared by A and B makes the whole contraction vanish. */
  bool zero_by_symmetry() const { return zero_by_symmetry_; }
  /** Size of the summed-label symmetry group used (1 when none). */
  int summed_symmetry_order() const { return summed_symmetry_order_; }
  /** Rows a stacked task aims for: enough that a B block is reused across a GEMM's rows. */
  static constexpr extent_t stack_rows = 256;
  /** With several workers, a stacked task holds at most 1 / (tasks_per_worker * workers) of the
   *  plan's flops, i.e. 1 / tasks_per_worker of one worker's ideal share: when no single output
   *  block is larger, list scheduling ends at most that fraction of the ideal after it (the last
   *  task starts no later than the ideal time). */
  static constexpr int tasks_per_worker = 8;
  /** Fewest flops a slab of an output block keeps (2^17, a few microseconds of GEMM), so that
   *  cutting a block never makes tasks whose scheduling and BLAS call outweigh their work. */
  static constexpr double min_slab_flops = 131072.0;
  int workers() const { return workers_; }
  /** Largest scratch one worker needs (permuted or stacked A, permuted B, R), in bytes. */
  extent_t scratch_bytes_per_worker() const { return scratch_bytes_; }
  std::int64_t num_products() const { return static_cast<std::int64_t>(products_.size()); }
  std::int64_t permuted_operands() const { return permuted_operands_; }
  double inspector_seconds() const { return inspector_seconds_; }
  /** The clock reading (clock_seconds()) the inspector began this plan at. */
  double inspector_started() const { return inspector_started_; }
  /** "C[i,j,a,b] += A[...] * B[...]": what the plan computes. */
  std::string expression() const;
  std::string summary() const;

 private:
  /** One canonical output block with products, before units are stacked into tasks. */
  struct Unit {
    Member member;
    extent_t n = 1;
    std::int64_t last = 0;  ///< its products are [member.first, last)
    double flops = 0.0;
    std::uint64_t b_reads = 0;  ///< hash of n and of how its products read B (StackingGrouper)
  };
  /** The cost model, with the permutations of A's and B's stored blocks priced once per block
   *  and layout: many products of a plan read one block the same way. */
  class Prices;
  /** The contraction's labels as small integers, with where each operand carries them. */
  struct LabelIds;
  /** Throws the error that names the first fault of labels that failed the checks as sets. */
  [[noreturn]] void report_label_fault() const;
  void build(const LabelIds& labels, Prices& prices);
  /** Each task's work as contract() runs it: its seconds under these prices (modelled_) and the
   *  scratch its steps write (scratch_bytes_, the largest over tasks). */
  void account_tasks(Prices& prices);
  void build_tce_loop(const std::vector<slot_t>& task_slots);
  /** Units laid out group by group: group g is units[starts[g] .. starts[g + 1]). */
  struct StackingGroups {
    std::pmr::vector<std::size_t> units, starts;
  };
  /** Groups units that read the same B blocks alike, in order of first appearance, as build()'s
   *  walk makes them: found by Unit::b_reads and compared exactly. */
  class StackingGrouper;
  void stack(std::span<const Unit> units, std::span<const std::size_t> group, Prices& prices);
  /** Whether the model prices `count` units like `unit`, stacked into one task, below the same
   *  units run one by one. */
  bool stacking_pays(const Unit& unit, std::size_t count, Prices& prices) const;
  /** Cuts a unit above `most_flops` into slab tasks when its layout allows; false if it cannot. */
  bool cut_into_slabs(const Unit& unit, double most_flops);
  /** Extent of the label a slab on `side` cuts, in output block `c_slot`. */
  extent_t slab_label_extent(slot_t c_slot, Side side) const;
  /** Extents, in C's order, of the task's part of output block `c_slot`: the block's own, or a
   *  copy in `buffer` (max_rank of them) with the slab's width. */
  const extent_t* c_extents(slot_t c_slot, const Task& task, extent_t* buffer) const;

  Operand c_, a_, b_;
  PlanLayout layout_;
  int workers_ = 1;
  std::vector<Task> tasks_;
  std::vector<Member> members_;
  std::vector<Product> products_;
  std::vector<Recipe> recipes_;
  std::vector<task_id_t> loop_;
  std::vector<double> modelled_;
  Output output_ = Output::direct;
  Axes output_axes_{};
  Axes r_positions_{};
  double dense_flops_ = 0.0, executed_flops_ = 0.0;
  double inspector_started_ = 0.0, inspector_seconds_ = 0.0;
  bool zero_by_symmetry_ = false;
  int summed_symmetry_order_ = 1;
  int row_labels_ = 0;
  extent_t scratch_bytes_ = 0;
  std::int64_t permuted_operands_ = 0;
};

}  // namespace tilecc
