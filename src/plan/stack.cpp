// Units into tasks: greedy stacking where the model prices it cheaper, and slabs of output
// blocks too large for one worker's share.
#include <algorithm>
#include <cmath>
#include <limits>

#include "prices.hpp"
#include "stacking.hpp"

namespace tilecc {

void ContractionPlan::stack(std::span<const Unit> units, std::span<const std::size_t> group,
                            Prices& prices) {
  // Greedy chunks of about stack_rows rows; a block that is tall enough stays alone. With several
  // workers a chunk also stops before it outgrows its share of the flops, and a block alone above
  // that share is cut into slabs where it can be. A group stacks only where the model prices it
  // cheaper: stacking copies every A block into the stacked matrix, which costs more than it saves
  // when the blocks are large and would have been read in place.
  const double most_flops = workers_ > 1 ? executed_flops_ / (tasks_per_worker * workers_)
                                         : std::numeric_limits<double>::infinity();
  const Unit& lead = units[group.front()];
  const extent_t n = lead.n;
  const std::int64_t products = lead.last - lead.member.first;
  const auto chunk = static_cast<std::size_t>(
      std::min({static_cast<double>(group.size()),
                std::ceil(static_cast<double>(stack_rows) / static_cast<double>(lead.member.m)),
                std::max(1.0, std::floor(most_flops / lead.flops))}));
  const extent_t rows_per_task = chunk > 1 && stacking_pays(lead, chunk, prices) ? stack_rows : 0;
  std::size_t g = 0;
  while (g < group.size()) {
    if (layout_ != PlanLayout::tce && units[group[g]].flops > most_flops &&
        cut_into_slabs(units[group[g]], most_flops)) {
      ++g;
      continue;
    }
    const auto first_member = static_cast<std::int64_t>(members_.size());
    extent_t rows = 0;
    double flops = 0.0;
    do {
      const Unit& unit = units[group[g]];
      members_.push_back(unit.member);
      members_.back().row_offset = rows;
      rows += unit.member.m;
      flops += unit.flops;
      ++g;
    } while (g < group.size() && rows < rows_per_task &&
             flops + units[group[g]].flops <= most_flops);
    Task& task = tasks_.emplace_back();
    task.first_member = first_member;
    task.last_member = static_cast<std::int64_t>(members_.size());
    task.products = products;
    task.rows = rows;
    task.n = n;
    task.flops = flops;
  }
}

bool ContractionPlan::stacking_pays(const Unit& unit, std::size_t count, Prices& prices) const {
  // What estimate() prices, stacked minus alone, for `count` copies of `unit`: the units of a
  // group read the same B blocks with the same summed extents, so the lead stands for them all.
  // Stacked, the task permutes each B block once instead of once per unit, runs one taller GEMM
  // per product (saving the model's terms that do not grow with the rows), fills R and scatters
  // it. An A block that is permuted alone anyway costs the same stacked (Recipe::a_rows is its
  // layout both ways); only a block read in place adds a copy.
  const CostModel& model = prices.model;
  const auto copies = static_cast<double>(count);
  const extent_t m = unit.member.m, n = unit.n;
  const double output = detail::price_block(prices.output(*this), *c_.shape, unit.member.c_slot);
  double extra =
      detail::fill_seconds(model, static_cast<extent_t>(copies) * m * n) + copies * output;
  if (output_ == Output::buffered) extra -= copies * (detail::fill_seconds(model, m * n) + output);
  extent_t summed_k = 0;
  for (std::int64_t p = unit.member.first; p < unit.last; ++p) {
    const Product& pr = products_[static_cast<std::size_t>(p)];
    const Recipe& rc = recipes_[static_cast<std::size_t>(pr.recipe)];
    const Prices::RecipeLayouts& layouts = prices.layouts(pr.recipe);
    if (!rc.a.permute) extra += copies * prices.a(pr.a_slot, layouts.a_rows);
    if (rc.b.permute) extra -= (copies - 1.0) * prices.b(pr.b_slot, layouts.b);
    summed_k += pr.k;
  }
  extra -= (copies - 1.0) * model.gemm_seconds_per_call(n, summed_k, unit.last - unit.member.first);
  return extra < 0.0;
}

extent_t ContractionPlan::slab_label_extent(slot_t c_slot, Side side) const {
  const int p = r_positions_[static_cast<std::size_t>(side == Side::rows ? 0 : row_labels_)];
  return c_.shape->block_extent(c_slot, p);
}

bool ContractionPlan::cut_into_slabs(const Unit& unit, double most_flops) {
  // A slab of rows slices A (a view in place, or a permutation of just that slab) and reads all
  // of B; a slab of columns the other way round. A side whose unsliced operand is read in place in
  // every product is cut as finely as the flops ask. Where both operands are permuted, every slab
  // permutes the unsliced one again, so the block is cut into at most one slab per worker: the
  // workers then run its slabs side by side, each permuting that operand once, where more slabs
  // would only repeat the permutation.
  bool a_in_place = true, b_in_place = true;
  for (std::int64_t p = unit.member.first; p < unit.last; ++p) {
    const Recipe& r =
        recipes_[static_cast<std::size_t>(products_[static_cast<std::size_t>(p)].recipe)];
    a_in_place = a_in_place && !r.a.permute;
    b_in_place = b_in_place && !r.b.permute;
  }
  const int nc = c_.shape->rank();
  const extent_t rows = row_labels_ > 0 ? slab_label_extent(unit.member.c_slot, Side::rows) : 1;
  const extent_t columns =
      row_labels_ < nc ? slab_label_extent(unit.member.c_slot, Side::columns) : 1;
  extent_t row_extent = b_in_place ? rows : 1, col_extent = a_in_place ? columns : 1;
  double most_slabs = std::numeric_limits<double>::infinity();
  if (std::max(row_extent, col_extent) < 2) {
    row_extent = rows;
    col_extent = columns;
    most_slabs = workers_;
  }
  const Side side = row_extent >= col_extent ? Side::rows : Side::columns;
  const extent_t extent = std::max(row_extent, col_extent);
  const auto slabs = static_cast<extent_t>(
      std::min({static_cast<double>(extent), std::ceil(unit.flops / most_flops),
                std::floor(unit.flops / min_slab_flops), most_slabs}));
  if (slabs < 2) return false;
  for (extent_t s = 0; s < slabs; ++s) {
    Task& task = tasks_.emplace_back();
    task.first_member = static_cast<std::int64_t>(members_.size());
    members_.push_back(unit.member);
    task.last_member = task.first_member + 1;
    task.products = unit.last - unit.member.first;
    task.rows = unit.member.m;
    task.n = unit.n;
    task.slab = Slab{side, s * extent / slabs, (s + 1) * extent / slabs};
    task.flops = unit.flops * static_cast<double>(task.slab.last - task.slab.first) /
                 static_cast<double>(extent);
  }
  return true;
}

}  // namespace tilecc
