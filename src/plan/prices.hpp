#pragma once
// What the inspector prices with: the cost model, with the permutations of A's and B's stored
// blocks priced once per block and layout (many products of a plan read one block the same way),
// and the working memory of one build.
#include <array>
#include <bit>
#include <cstddef>
#include <memory_resource>
#include <optional>
#include <vector>

#include "tilecc/cost.hpp"
#include "tilecc/plan.hpp"

namespace tilecc {
namespace detail {

// Zeroing a task's R before its GEMMs accumulate into it, priced as a copy of its elements.
inline double fill_seconds(const CostModel& model, extent_t elements) {
  return model.permute_seconds(PermuteShape{PermuteKind::copy, elements, 1});
}

// A whole stored block, priced by what its shape keeps of it (its extents, size and pattern).
inline double price_block(PermutePricer& price, const BlockShape& shape, slot_t slot) {
  return price(shape.block_extents(slot), shape.block_size(slot), shape.block_long_axes(slot));
}

// The seconds of permuting each stored block of one operand into each layout asked for, every
// block of a layout priced at once when a block is first asked for in it. Callers look a layout
// up once (layout()) and price blocks by its index.
class BlockPermutePrices {
 public:
  BlockPermutePrices(const CostModel& model, const BlockShape& shape,
                     std::pmr::memory_resource* memory)
      : model_(model), shape_(shape), layouts_(memory) {}
  /** The index of `axes` among the layouts priced, added if new. */
  int layout(const Axes& axes) {
    // A plan reads an operand in one to a few layouts (one per recipe at most): a linear search.
    const auto key = std::bit_cast<std::uint64_t>(axes);
    for (std::size_t l = 0; l < layouts_.size(); ++l)
      if (layouts_[l].key == key) return static_cast<int>(l);
    layouts_.push_back({key, PermutePricer(model_, shape_.rank(), axes),
                        std::pmr::vector<double>(layouts_.get_allocator())});
    return static_cast<int>(layouts_.size() - 1);
  }
  double operator()(slot_t slot, int layout) {
    Layout& l = layouts_[static_cast<std::size_t>(layout)];
    if (l.seconds.empty()) [[unlikely]] {
      l.seconds.resize(static_cast<std::size_t>(shape_.num_blocks()));
      l.price.price_blocks(shape_.num_blocks(), shape_.block_extents(0), shape_.all_block_sizes(),
                           shape_.all_block_long_axes(), l.seconds.data());
    }
    return l.seconds[static_cast<std::size_t>(slot)];
  }
  /** A slab of the block, `width` indices of its axis `cut`. */
  double slab(slot_t slot, int layout, int cut, extent_t width) {
    extent_t extents[max_rank];
    std::copy_n(shape_.block_extents(slot), shape_.rank(), extents);
    extents[cut] = width;
    return layouts_[static_cast<std::size_t>(layout)].price(extents);
  }

 private:
  struct Layout {
    std::uint64_t key;  // axes, as 8 bytes
    PermutePricer price;
    std::pmr::vector<double> seconds;  // per slot; empty until a block is first asked for
  };
  const CostModel& model_;
  const BlockShape& shape_;
  std::pmr::vector<Layout> layouts_;
};

}  // namespace detail

class ContractionPlan::Prices {
  // The working memory of one build (its walk, groups and price memos) comes from one arena,
  // freed at once when the build ends, in place of some twenty mallocs and frees per plan. Its
  // first 32 KiB sit on the stack; past them it takes larger blocks from the heap.
  std::array<std::byte, 32768> buffer_;
  std::pmr::monotonic_buffer_resource arena_{buffer_.data(), buffer_.size()};

 public:
  Prices(const CostModel& cost_model, const BlockShape& a_shape, const BlockShape& b_shape)
      : model(cost_model), a(cost_model, a_shape, &arena_), b(cost_model, b_shape, &arena_) {}
  Prices(const Prices&) = delete;
  Prices& operator=(const Prices&) = delete;
  /** Memory for the build's temporaries, which must not outlive this. */
  std::pmr::memory_resource* memory() { return &arena_; }
  const CostModel& model;
  detail::BlockPermutePrices a, b;
  /** The plan's output permutation, from R[M, N] into C by output_axes(), priced per block from
   *  the extents of its block of C (ContractionPlan::c_extents). */
  PermutePricer& output(const ContractionPlan& plan) {
    if (!output_) {
      output_.emplace(model, plan.c_.shape->rank(), plan.output_axes_, plan.r_positions_);
    }
    return *output_;
  }
  /** The layouts each recipe reads its blocks in: A stacked (Recipe::a_rows), A and B permuted
   *  (-1 where the recipe reads the operand in place). */
  struct RecipeLayouts {
    int a_rows = -1, a = -1, b = -1;
  };
  /** Looks up the layouts of the plan's recipes, once they are all known. */
  void index_recipes(const std::vector<Recipe>& recipes) {
    recipe_layouts_.clear();
    for (const Recipe& rc : recipes)
      recipe_layouts_.push_back({a.layout(rc.a_rows), rc.a.permute ? a.layout(rc.a.axes) : -1,
                                 rc.b.permute ? b.layout(rc.b.axes) : -1});
  }
  /** Layouts of the r-th recipe given to index_recipes(). */
  const RecipeLayouts& layouts(std::int32_t r) const {
    return recipe_layouts_[static_cast<std::size_t>(r)];
  }

 private:
  std::pmr::vector<RecipeLayouts> recipe_layouts_{&arena_};
  std::optional<PermutePricer> output_;
};

}  // namespace tilecc
