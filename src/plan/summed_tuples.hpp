#pragma once
// The summed side of a contraction: the permutations of its summed labels that both operands'
// symmetries realise (the group H whose orbits the walk visits once each, weighted), and the
// summed tile tuples an output block's products take, listed by irrep.
#include <algorithm>
#include <array>
#include <memory_resource>
#include <numeric>
#include <span>
#include <vector>

#include "label_ids.hpp"
#include "tilecc/shape.hpp"

namespace tilecc::detail {

// A permutation of the summed labels (rho[q]: the summed-label index that q maps to) that a
// symmetry element of an operand realises while fixing its other labels, with that element's sign.
struct SummedSymmetry {
  Ids rho;
  int sign;
};

// The distinct summed-label permutations an operand with these label ids realises. The summed
// labels' ids are first_summed, first_summed + 1, ... (LabelIds numbers them last), so the summed
// label an id stands for is worked out, not searched for.
inline std::pmr::vector<SummedSymmetry> summed_symmetries(const BlockShape& shape,
                                                          const Ids& labels, int first_summed,
                                                          int summed_count,
                                                          std::pmr::memory_resource* memory) {
  std::pmr::vector<SummedSymmetry> found(memory);
  for (const SymmetryElement& g : shape.group().elements()) {
    // rho[q] for each summed label q.
    Ids r = Ids::unset(summed_count);
    bool fixes_others = true;
    for (int p = 0; p < labels.size(); ++p) {
      const int gp = g.perm[static_cast<std::size_t>(p)];
      const int from = labels[p] - first_summed;
      const bool summed = from >= 0;
      fixes_others = fixes_others && (summed || gp == p);
      if (summed) r.set(from, labels[gp] - first_summed);
    }
    // An element that fixes the other labels maps summed labels to summed labels.
    if (fixes_others && std::none_of(found.begin(), found.end(),
                                     [&](const SummedSymmetry& f) { return f.rho == r; }))
      found.push_back({r, g.sign});
  }
  return found;
}

// The summed tile tuples of a contraction, listed by irrep (the xor of their tiles' irreps): an
// output block's products take the tuples of one irrep, the one that completes the irreps of A
// and of the block's row tiles, so every output block whose row tiles have the same irreps walks
// the same list. A list is made the first time a block asks for it, in lexicographic order of
// the tuples, each with what the walk needs of it.
class SummedTuples {
 public:
  struct Entry {
    block_id_t a_offset = 0, b_offset = 0;  ///< sum of tile * stride in A's and B's tile grids
    extent_t k = 1;                         ///< product of the tiles' extents
    double weight = 1.0;                    ///< size of the tuple's H-orbit over its stabiliser
  };
  /** `h`: the summed-label permutations of the plan's symmetry H; a tuple that is not the
   *  smallest of its H-orbit is left out (its orbit's smallest stands for it, weighted). */
  SummedTuples(const std::array<const IndexSpace*, max_rank>& spaces, std::size_t count,
               std::span<const Ids> h, const block_id_t* a_strides, const block_id_t* b_strides,
               std::pmr::memory_resource* memory)
      : spaces_(spaces), count_(count), h_(h), last_tiles_(memory), entries_(memory) {
    std::copy_n(a_strides, count, a_strides_.begin());
    std::copy_n(b_strides, count, b_strides_.begin());
    if (count_ == 0) return;
    // The last summed label's tiles of each irrep, so that the walk tries only those there.
    const IndexSpace& last = *spaces_[count_ - 1];
    for (tile_t t = 0; t < last.num_tiles(); ++t)
      ++last_start_[static_cast<std::size_t>(last.tile(t).irrep) + 1];
    std::partial_sum(last_start_.begin(), last_start_.end(), last_start_.begin());
    last_tiles_.resize(static_cast<std::size_t>(last.num_tiles()));
    std::array<std::size_t, irreps + 1> next = last_start_;
    for (tile_t t = 0; t < last.num_tiles(); ++t)
      last_tiles_[next[static_cast<std::size_t>(last.tile(t).irrep)]++] = t;
  }
  /** The tuples whose tiles' irreps multiply to `irrep`; when nothing is summed, the one empty
   *  tuple, whatever `irrep`. The span holds until a call for another irrep. */
  std::span<const Entry> of_irrep(int irrep) {
    const auto g = count_ == 0 ? std::size_t{0} : static_cast<std::size_t>(irrep);
    if (!listed_[g]) {
      listed_[g] = true;
      ranges_[g].first = entries_.size();
      list(g);
      ranges_[g].second = entries_.size();
    }
    return std::span(entries_).subspan(ranges_[g].first, ranges_[g].second - ranges_[g].first);
  }

 private:
  static constexpr std::size_t irreps = 8;  // D2h and its subgroups
  /** Appends the tuples of `irrep` to entries_. */
  void list(std::size_t irrep) {
    if (count_ == 0) {
      entries_.push_back(Entry{});
      return;
    }
    // Odometer over all summed tiles but the last, which takes only the tiles of its irrep.
    std::array<tile_t, max_rank> u{}, image{};
    const std::size_t last = count_ - 1;
    for (;;) {
      Entry outer;
      int g = static_cast<int>(irrep);
      for (std::size_t q = 0; q < last; ++q) {
        const Tile& tile = spaces_[q]->tile(u[q]);
        outer.a_offset += static_cast<block_id_t>(u[q]) * a_strides_[q];
        outer.b_offset += static_cast<block_id_t>(u[q]) * b_strides_[q];
        outer.k *= tile.extent;
        g ^= tile.irrep;
      }
      const auto gu = static_cast<std::size_t>(g);
      for (std::size_t i = last_start_[gu]; i < last_start_[gu + 1]; ++i) {
        const tile_t t = last_tiles_[i];
        u[last] = t;
        Entry e = outer;
        e.a_offset += static_cast<block_id_t>(t) * a_strides_[last];
        e.b_offset += static_cast<block_id_t>(t) * b_strides_[last];
        e.k *= spaces_[last]->tile(t).extent;
        if (h_.size() > 1) {
          // Kept only if no permutation in H maps it to a smaller tuple; weighted by its
          // orbit's size, |H| over the permutations that fix it.
          int stabiliser = 0;
          bool smallest = true;
          for (const Ids& rho : h_) {
            for (std::size_t q = 0; q < count_; ++q)
              image[q] = u[static_cast<std::size_t>(rho[static_cast<int>(q)])];
            if (std::lexicographical_compare(image.begin(), image.begin() + count_, u.begin(),
                                             u.begin() + count_)) {
              smallest = false;
              break;
            }
            stabiliser += std::equal(image.begin(), image.begin() + count_, u.begin()) ? 1 : 0;
          }
          if (!smallest) continue;
          e.weight = static_cast<double>(h_.size()) / stabiliser;
        }
        entries_.push_back(e);
      }
      std::size_t q = last;
      while (q > 0 && ++u[q - 1] == spaces_[q - 1]->num_tiles()) u[--q] = 0;
      if (q == 0) break;
    }
  }

  std::array<const IndexSpace*, max_rank> spaces_;
  std::size_t count_;
  std::span<const Ids> h_;
  std::array<block_id_t, max_rank> a_strides_{}, b_strides_{};
  // last_tiles_[last_start_[g] .. last_start_[g + 1]) are the last summed label's tiles of irrep g.
  std::pmr::vector<tile_t> last_tiles_;
  std::array<std::size_t, irreps + 1> last_start_{};
  // The lists, one after another in the order they were asked for: irrep g's is
  // entries_[ranges_[g].first .. ranges_[g].second).
  std::pmr::vector<Entry> entries_;
  std::array<std::pair<std::size_t, std::size_t>, irreps> ranges_{};
  std::array<bool, irreps> listed_{};
};

}  // namespace tilecc::detail
