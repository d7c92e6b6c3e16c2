#pragma once
// Stacking: output blocks whose products read the same B blocks alike share GEMMs (their A
// blocks stacked into one taller matrix). The walk hashes each unit's B reads; the grouper
// finds units with equal reads by that hash and compares them exactly.
#include <cstdint>
#include <memory_resource>
#include <numeric>
#include <span>

#include "tilecc/plan.hpp"

namespace tilecc {
namespace detail {

// How a recipe reads B blocks (in place, transposed or permuted, and by which axes), as a number:
// units whose products read the same B blocks the same way can be stacked.
inline std::uint64_t b_layout_key(const ContractionPlan::Recipe& r, int b_rank) {
  std::uint64_t key = (r.b.permute ? 2 : 0) + (r.b.trans ? 1 : 0);
  for (int j = 0; j < b_rank; ++j)
    key = key * 8 + static_cast<std::uint64_t>(r.b.axes[static_cast<std::size_t>(j)]);
  return key;
}

// A unit's hash of its B reads, `h`, extended by one product's: its B block, the layout it is
// read in (b_layout_key, spread by b_layout_bits) and its summed extent. One multiply per product,
// in the walk. It hashes what StackingGrouper compares exactly (with the unit's n): change the two
// together.
inline std::uint64_t mix_b_read(std::uint64_t h, slot_t b_slot, std::uint64_t b_layout_bits,
                                extent_t k) {
  const std::uint64_t v =
      static_cast<std::uint64_t>(b_slot) ^ (static_cast<std::uint64_t>(k) << 24) ^ b_layout_bits;
  return (h ^ v) * 0x100000001b3ULL;
}
// b_layout_key spread over the bits mix_b_read leaves to it, once per recipe.
inline std::uint64_t b_layout_bits(std::uint64_t b_layout) {
  return (b_layout << 40) ^ (b_layout >> 24);
}

}  // namespace detail

class ContractionPlan::StackingGrouper {
 public:
  /** Room for up to `most_units` units; the groups and the work's temporaries live in `memory`. */
  StackingGrouper(std::size_t most_units, std::pmr::memory_resource* memory)
      : table_(memory), group_hash_(memory), group_of_(memory), leads_(memory) {
    std::size_t size = 1;
    while (size < 2 * most_units) size *= 2;
    table_.assign(size, -1);
    group_hash_.reserve(most_units);
    group_of_.reserve(most_units);
    leads_.reserve(most_units);
  }
  /** Puts the newest unit, units.back(), in the first group whose lead reads B as it does, or in
   *  a group of its own. `b_layouts`: per recipe, how it reads B blocks. Called by the walk as it
   *  makes each unit, while the unit and its products are still in cache. */
  void join(const ContractionPlan& plan, std::span<const Unit> units,
            std::span<const std::uint64_t> b_layouts) {
    const Unit& un = units.back();
    const std::uint64_t h = un.b_reads;
    const std::size_t mask = table_.size() - 1;
    for (std::size_t slot = (h * 0x9E3779B97F4A7C15ULL) >> 32 & mask;; slot = (slot + 1) & mask) {
      const std::int64_t g = table_[slot];
      if (g < 0) {
        table_[slot] = static_cast<std::int64_t>(leads_.size());
        group_of_.push_back(leads_.size());
        leads_.push_back(units.size() - 1);
        group_hash_.push_back(h);
        return;
      }
      const auto gu = static_cast<std::size_t>(g);
      if (group_hash_[gu] == h && same_b_reads(plan, units[leads_[gu]], un, b_layouts)) {
        group_of_.push_back(gu);
        return;
      }
    }
  }
  /** The units joined so far, laid out group by group, groups in order of their first unit and
   *  units in their order within a group. */
  StackingGroups groups(std::pmr::memory_resource* memory) const {
    StackingGroups out{std::pmr::vector<std::size_t>(memory),
                       std::pmr::vector<std::size_t>(memory)};
    out.starts.assign(leads_.size() + 1, 0);
    for (std::size_t g : group_of_) ++out.starts[g + 1];
    std::partial_sum(out.starts.begin(), out.starts.end(), out.starts.begin());
    out.units.resize(group_of_.size());
    std::pmr::vector<std::size_t> next(out.starts.begin(), out.starts.end() - 1, memory);
    for (std::size_t i = 0; i < group_of_.size(); ++i) out.units[next[group_of_[i]]++] = i;
    return out;
  }

 private:
  // Units whose products read the same B blocks, laid out alike, in the same order can share
  // GEMMs.
  static bool same_b_reads(const ContractionPlan& plan, const Unit& x, const Unit& y,
                           std::span<const std::uint64_t> b_layouts) {
    const std::int64_t count = x.last - x.member.first;
    if (x.n != y.n || count != y.last - y.member.first) return false;
    for (std::int64_t p = 0; p < count; ++p) {
      const Product& px = plan.products_[static_cast<std::size_t>(x.member.first + p)];
      const Product& py = plan.products_[static_cast<std::size_t>(y.member.first + p)];
      if (px.b_slot != py.b_slot || px.k != py.k ||
          b_layouts[static_cast<std::size_t>(px.recipe)] !=
              b_layouts[static_cast<std::size_t>(py.recipe)])
        return false;
    }
    return true;
  }
  // Open addressing: each slot holds a group id (-1: empty), keyed by its lead's hash.
  std::pmr::vector<std::int64_t> table_;
  std::pmr::vector<std::uint64_t> group_hash_;  // per group, its lead's Unit::b_reads
  std::pmr::vector<std::size_t> group_of_;      // per unit joined
  std::pmr::vector<std::size_t> leads_;         // per group, the index of its first unit
};

}  // namespace tilecc
