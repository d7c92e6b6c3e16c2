// Each task's work as contract() runs it, priced: operand permutations or stacking, GEMMs, the
// output permutation; and the windows and extents of slab tasks that the pricing and the
// executor share.
#include <algorithm>

#include "prices.hpp"

namespace tilecc {

ContractionPlan::Window ContractionPlan::window(const Task& task) const {
  Window w{0, task.rows, 0, task.n};
  if (task.slab.side == Side::whole) return w;
  const slot_t c_slot = members_[static_cast<std::size_t>(task.first_member)].c_slot;
  const extent_t extent = slab_label_extent(c_slot, task.slab.side);
  const extent_t width = task.slab.last - task.slab.first;
  if (task.slab.side == Side::rows) {
    const extent_t inner = task.rows / extent;  // rows per index of the first row label
    w.row0 = task.slab.first * inner;
    w.rows = width * inner;
  } else {
    const extent_t inner = task.n / extent;
    w.col0 = task.slab.first * inner;
    w.cols = width * inner;
  }
  return w;
}

int ContractionPlan::permuted_slab_axis(const Recipe& recipe, Side side, const Task& task) const {
  if (task.slab.side != side) return -1;
  if (side == Side::rows) return recipe.a.permute ? recipe.a.axes[0] : -1;
  // B permuted is [summed..., columns...]: its first column label follows the summed ones.
  const int columns = c_.shape->rank() - row_labels_;
  return recipe.b.permute ? recipe.b.axes[static_cast<std::size_t>(b_.shape->rank() - columns)]
                          : -1;
}

const extent_t* ContractionPlan::c_extents(slot_t c_slot, const Task& task,
                                           extent_t* buffer) const {
  const extent_t* block = c_.shape->block_extents(c_slot);
  if (task.slab.side == Side::whole) return block;
  std::copy_n(block, c_.shape->rank(), buffer);
  buffer[r_positions_[static_cast<std::size_t>(task.slab.side == Side::rows ? 0 : row_labels_)]] =
      task.slab.last - task.slab.first;
  return buffer;
}

void ContractionPlan::r_extents(slot_t c_slot, const Task& task, extent_t* extents) const {
  extent_t buffer[max_rank];
  const extent_t* c = c_extents(c_slot, task, buffer);
  for (int q = 0; q < c_.shape->rank(); ++q)
    extents[q] = c[r_positions_[static_cast<std::size_t>(q)]];
}

void ContractionPlan::account_tasks(Prices& prices) {
  // The work of each task as contract() does it: operand permutations (or row stacking), one GEMM
  // per product, and the output's permutation when the result goes through scratch. The scratch
  // is what those steps write: the stacked or permuted A, the permuted B, and R.
  const CostModel& model = prices.model;
  extent_t extents[max_rank];
  PermutePricer& output = prices.output(*this);
  modelled_.clear();
  modelled_.reserve(tasks_.size());
  scratch_bytes_ = 0;
  // A permutation of a whole block, or of the slab that `cut` (a stored axis, -1 for none) and
  // the task's slab select.
  auto permute = [](detail::BlockPermutePrices& operand, slot_t slot, int layout, const Task& task,
                    int cut) {
    return cut < 0 ? operand(slot, layout)
                   : operand.slab(slot, layout, cut, task.slab.last - task.slab.first);
  };
  for (const Task& task : tasks_) {
    const Member* mem = &members_[static_cast<std::size_t>(task.first_member)];
    const std::int64_t count = task.last_member - task.first_member;
    const bool alone = count == 1;
    const bool through_r = !alone || output_ == Output::buffered;
    const Window w = window(task);
    const extent_t r_elements = through_r ? w.rows * w.cols : 0;
    double seconds = 0.0;
    if (through_r) seconds += detail::fill_seconds(model, r_elements);
    extent_t summed_k = 0;  // of the task's GEMMs, one per product, priced together below
    for (std::int64_t p = 0; p < task.products; ++p) {
      const Product& lead = products_[static_cast<std::size_t>(mem[0].first + p)];
      const Recipe& lr = recipes_[static_cast<std::size_t>(lead.recipe)];
      const Prices::RecipeLayouts& layouts = prices.layouts(lead.recipe);
      if (!alone) {
        for (std::int64_t g = 0; g < count; ++g) {
          const Product& pr = products_[static_cast<std::size_t>(mem[g].first + p)];
          seconds += prices.a(pr.a_slot, prices.layouts(pr.recipe).a_rows);
        }
      } else if (lr.a.permute) {
        seconds += permute(prices.a, lead.a_slot, layouts.a, task,
                           permuted_slab_axis(lr, Side::rows, task));
      }
      if (lr.b.permute)
        seconds += permute(prices.b, lead.b_slot, layouts.b, task,
                           permuted_slab_axis(lr, Side::columns, task));
      summed_k += lead.k;
      const extent_t a_elements = (!alone || lr.a.permute) ? w.rows * lead.k : 0;
      const extent_t b_elements = lr.b.permute ? lead.k * w.cols : 0;
      scratch_bytes_ = std::max(scratch_bytes_, (a_elements + b_elements + r_elements) *
                                                    static_cast<extent_t>(sizeof(double)));
    }
    seconds += model.gemm_seconds(w.rows, w.cols, summed_k, task.products);
    if (through_r) {
      for (std::int64_t g = 0; g < count; ++g)
        seconds += task.slab.side == Side::whole
                       ? detail::price_block(output, *c_.shape, mem[g].c_slot)
                       : output(c_extents(mem[g].c_slot, task, extents));
    }
    modelled_.push_back(seconds);
  }
}

}  // namespace tilecc
