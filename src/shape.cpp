#include "tilecc/shape.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>

#include "detail/checked.hpp"
#include "tilecc/error.hpp"

namespace tilecc {
namespace {

// Blocks start on 64-byte boundaries so that kernels may use aligned loads on block starts.

bool lexicographically_less(const tile_t* a, const tile_t* b, int rank) {
  for (int k = 0; k < rank; ++k)
    if (a[k] != b[k]) return a[k] < b[k];
  return false;
}

// The orbits of the whole tile grid under `group`, by Burnside's lemma (the mean over elements of
// the tuples each fixes): a bound on a shape's stored blocks, which allowed() only makes fewer. An
// element fixes the tuples that are constant on each of its cycles, and a cycle's indices share
// one space (the constructor checks it).
std::int64_t grid_orbits(const std::vector<SpacePtr>& spaces, const PermutationGroup& group) {
  std::int64_t fixed = 0;  // at most 8! * 2^27 < 2^63
  for (const SymmetryElement& g : group.elements()) {
    std::int64_t tuples = 1;
    std::array<bool, max_rank> seen{};
    for (std::size_t k = 0; k < spaces.size(); ++k) {
      if (seen[k]) continue;
      tuples = detail::checked_product<std::int64_t>(tuples, spaces[k]->num_tiles(),
                                                     "the number of tile tuples");
      for (auto j = k; !seen[j]; j = static_cast<std::size_t>(g.perm[j])) seen[j] = true;
    }
    fixed += tuples;
  }
  return fixed / static_cast<std::int64_t>(group.order());
}

}  // namespace

BlockShape::BlockShape(std::vector<SpacePtr> spaces, PermutationGroup group,
                       std::vector<int> spin_sides, int irrep, Index index)
    : spaces_(std::move(spaces)),
      group_(std::move(group)),
      spin_sides_(std::move(spin_sides)),
      irrep_(irrep) {
  const int n = rank();
  TILECC_CHECK(n <= max_rank, "tensors have at most ", max_rank, " indices, got ", n, ".");
  for (int k = 0; k < n; ++k)
    TILECC_CHECK(spaces_[static_cast<std::size_t>(k)] != nullptr, "index ", k, " has no space.");
  TILECC_CHECK(group_.rank() == n, "the symmetry group acts on ", group_.rank(),
               " indices but the tensor has ", n, ".");
  TILECC_CHECK(irrep >= 0 && irrep < 8, "a tensor's irrep must be 0 to 7 (D2h subgroups), got ",
               irrep, ".");
  if (spin_sides_.empty()) {
    // Default: t_ij^ab, <pq||rs>: first half bra, second half ket; odd rank has no spin rule.
    spin_sides_.assign(static_cast<std::size_t>(n), 0);
    if (n % 2 == 0)
      for (int k = 0; k < n; ++k) spin_sides_[static_cast<std::size_t>(k)] = k < n / 2 ? 1 : -1;
  }
  TILECC_CHECK(static_cast<int>(spin_sides_.size()) == n, "spin sides give ", spin_sides_.size(),
               " entries for a tensor with ", n, " indices.");
  for (int s : spin_sides_)
    TILECC_CHECK(s >= -1 && s <= 1, "spin sides must be +1 (bra), -1 (ket) or 0, got ", s, ".");
  for (const SymmetryElement& g : group_.generators()) {
    bool same = true, flipped = true;
    for (int k = 0; k < n; ++k) {
      const auto ku = static_cast<std::size_t>(k);
      const auto gk = static_cast<std::size_t>(g.perm[ku]);
      TILECC_CHECK(*spaces_[ku] == *spaces_[gk], "symmetry generator ",
                   PermutationGroup::describe(g), " swaps index ", k, " (space ",
                   spaces_[ku]->describe(), ") with index ", gk, " (space ",
                   spaces_[gk]->describe(),
                   "); only indices over the same space can be"
                   " permuted.");
      same = same && spin_sides_[gk] == spin_sides_[ku];
      flipped = flipped && spin_sides_[gk] == -spin_sides_[ku];
    }
    TILECC_CHECK(same || flipped, "symmetry generator ", PermutationGroup::describe(g),
                 " mixes bra and ket indices, so it does not conserve spin; give spin sides that"
                 " it maps onto themselves.");
  }
  strides_.assign(static_cast<std::size_t>(n), 1);
  for (int k = n - 2; k >= 0; --k)
    strides_[static_cast<std::size_t>(k)] = detail::checked_product<block_id_t>(
        strides_[static_cast<std::size_t>(k + 1)],
        static_cast<block_id_t>(space(k + 1).num_tiles()), "the number of tile tuples");
  enumerate_blocks(index);
}

bool BlockShape::allowed(const tile_t* tiles) const {
  int spin = 0, irrep = 0;
  for (int k = 0; k < rank(); ++k) {
    const Tile& t = space(k).tile(tiles[k]);
    spin += spin_sides_[static_cast<std::size_t>(k)] * static_cast<int>(t.spin);
    irrep ^= t.irrep;
  }
  return spin == 0 && irrep == irrep_;
}

bool BlockShape::is_canonical(const tile_t* tiles) const {
  TileTuple image{};
  for (const SymmetryElement& g : group_.elements()) {
    for (int k = 0; k < rank(); ++k)
      image[static_cast<std::size_t>(k)] = tiles[g.perm[static_cast<std::size_t>(k)]];
    if (lexicographically_less(image.data(), tiles, rank())) return false;
  }
  return true;
}

void BlockShape::enumerate_blocks(Index index) {
  const int n = rank();
  for (const SymmetryElement& g : group_.elements()) {
    // block[x] = sign * stored[y] with y[k] = x[g[k]], i.e. axes = g^-1.
    Axes axes{};
    for (int k = 0; k < n; ++k)
      axes[static_cast<std::size_t>(g.perm[static_cast<std::size_t>(k)])] =
          static_cast<std::int8_t>(k);
    element_axes_.push_back(axes);
  }
  block_id_t tuples = 1;
  for (int k = 0; k < n; ++k)
    tuples = detail::checked_product<block_id_t>(
        tuples, static_cast<block_id_t>(space(k).num_tiles()), "the number of tile tuples");
  TILECC_CHECK(index != Index::dense || tuples <= max_tile_tuples, "a tensor over ", space_names(),
               " has ", tuples, " tile tuples, more than the ", max_tile_tuples,
               " a dense block index holds; use a sparse index or larger tiles.");
  sparse_index_ = index == Index::sparse || (index == Index::automatic && tuples > max_tile_tuples);
  // An index entry is a slot and an element in 31 bits: the element in element_bits_ of them (a
  // plan's products keep slots in 32 bits, sparse index or not).
  element_bits_ = static_cast<int>(std::bit_width(group_.order() - 1));
  element_mask_ = (std::int32_t{1} << element_bits_) - 1;
  const std::int64_t most_blocks = grid_orbits(spaces_, group_);
  const int slot_bits = static_cast<int>(
      std::bit_width(static_cast<std::uint64_t>(std::max<std::int64_t>(most_blocks - 1, 0))));
  TILECC_CHECK(slot_bits + element_bits_ <= 31, "a tensor over ", space_names(), " may have ",
               most_blocks, " distinct blocks under its symmetry group of order ", group_.order(),
               ", more than its block index can number; use larger tiles.");
  if (tuples == 0) return;
  if (sparse_index_) {
    refuse_blocks_beyond_memory();
    enumerate_sparse();
    return;
  }
  locator_.assign(static_cast<std::size_t>(tuples), -1);
  TileTuple t{}, best{};
  // The odometer visits tuples in lexicographic order, so a tuple's canonical block (the smallest
  // of its orbit) has its slot before the tuple is reached.
  for (;;) {
    if (allowed(t.data())) {
      std::size_t best_g = 0;
      int stabiliser = 0;
      canonical_image(t, best, best_g, stabiliser);
      slot_t slot = 0;
      if (best == t) {  // canonical: a new stored block
        slot = num_blocks();
        add_canonical_block(t, stabiliser);
      } else {
        slot = locator_[block_id(best.data())] >> element_bits_;
      }
      locator_[block_id(t.data())] =
          static_cast<std::int32_t>(slot << element_bits_ | static_cast<slot_t>(best_g));
    }
    // Odometer over the tile grid, last index fastest.
    int k = n - 1;
    while (k >= 0 && ++t[static_cast<std::size_t>(k)] == space(k).num_tiles())
      t[static_cast<std::size_t>(k--)] = 0;
    if (k < 0) break;
  }
}

void BlockShape::canonical_image(const TileTuple& t, TileTuple& best, std::size_t& element,
                                 int& stabiliser) const {
  const int n = rank();
  TileTuple image{};
  best = t;
  element = 0;
  stabiliser = 0;
  for (std::size_t e = 0; e < group_.elements().size(); ++e) {
    const std::vector<int>& perm = group_.elements()[e].perm;
    for (int k = 0; k < n; ++k)
      image[static_cast<std::size_t>(k)] =
          t[static_cast<std::size_t>(perm[static_cast<std::size_t>(k)])];
    if (lexicographically_less(image.data(), best.data(), n)) {
      best = image;
      element = e;
    }
    stabiliser += std::equal(image.begin(), image.begin() + n, t.begin()) ? 1 : 0;
  }
}

void BlockShape::add_canonical_block(const TileTuple& t, int stabiliser) {
  const int n = rank();
  tiles_.insert(tiles_.end(), t.begin(), t.begin() + n);
  extent_t size = 1;
  unsigned long_axes = 0;
  for (int k = 0; k < n; ++k) {
    extents_.push_back(space(k).tile(t[static_cast<std::size_t>(k)]).extent);
    size = detail::checked_product<extent_t>(size, extents_.back(), "a block's elements");
    long_axes |= static_cast<unsigned>(extents_.back() != 1) << k;
  }
  sizes_.push_back(size);
  long_axes_.push_back(static_cast<std::uint8_t>(long_axes));
  const int orbit = static_cast<int>(group_.order()) / stabiliser;
  orbit_sizes_.push_back(orbit);
  stored_elements_ =
      detail::checked_sum<extent_t>(stored_elements_, size, "the tensor's stored elements");
  nonzero_elements_ = detail::checked_sum<extent_t>(
      nonzero_elements_, detail::checked_product<extent_t>(size, orbit, "a block's orbit"),
      "the tensor's non-zero elements");
}

std::vector<std::vector<std::pair<tile_t, tile_t>>> BlockShape::tile_classes() const {
  // Tiles are sorted by spin, then irrep: a class is a contiguous run of them, [first, last).
  std::vector<std::vector<std::pair<tile_t, tile_t>>> classes(static_cast<std::size_t>(rank()));
  for (int k = 0; k < rank(); ++k) {
    const IndexSpace& s = space(k);
    auto& runs = classes[static_cast<std::size_t>(k)];
    for (tile_t t = 0; t < s.num_tiles(); ++t) {
      if (t > 0 && s.tile(t).spin == s.tile(t - 1).spin && s.tile(t).irrep == s.tile(t - 1).irrep)
        runs.back().second = t + 1;
      else
        runs.emplace_back(t, t + 1);
    }
  }
  return classes;
}

void BlockShape::refuse_blocks_beyond_memory() const {
  // Allowed tuples, counted class by class (not tuple by tuple), over the group's order: about
  // the number of canonical blocks, each of which the shape and its index keep a few words for.
  const int n = rank();
  const auto classes = tile_classes();
  std::vector<std::size_t> pick(static_cast<std::size_t>(n), 0);
  TileTuple first{};
  double allowed_tuples = 0.0;
  for (;;) {
    double tuples = 1.0;
    for (int k = 0; k < n; ++k) {
      const auto& run = classes[static_cast<std::size_t>(k)][pick[static_cast<std::size_t>(k)]];
      first[static_cast<std::size_t>(k)] = run.first;
      tuples *= static_cast<double>(run.second - run.first);
    }
    if (allowed(first.data())) allowed_tuples += tuples;
    int k = n - 1;
    while (k >= 0 &&
           ++pick[static_cast<std::size_t>(k)] == classes[static_cast<std::size_t>(k)].size())
      pick[static_cast<std::size_t>(k--)] = 0;
    if (k < 0) break;
  }
  const double blocks = allowed_tuples / static_cast<double>(group_.order());
  const double bytes_per_block =
      static_cast<double>(n * (sizeof(tile_t) + sizeof(extent_t)) + sizeof(extent_t) + 1 +
                          sizeof(int) + 2 * sizeof(block_id_t) + sizeof(slot_t));
  const double memory =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  TILECC_CHECK(blocks * bytes_per_block <= memory, "a tensor over ", space_names(), " has about ",
               static_cast<std::int64_t>(blocks), " canonical non-zero blocks, whose index needs ",
               static_cast<std::int64_t>(blocks * bytes_per_block / (1 << 20)),
               " MiB, more than this machine's ", static_cast<std::int64_t>(memory / (1 << 20)),
               " MiB; use larger tiles.");
}

void BlockShape::enumerate_sparse() {
  // Whether a block is allowed depends on its tiles' spins and irreps only, and tiles are sorted
  // by spin, then irrep: each index's tiles fall into a few contiguous classes. Only the
  // combinations of classes that are allowed are walked, tile by tile, and only the canonical
  // tuples among them are stored: the grid itself is never visited.
  const int n = rank();
  const auto classes = tile_classes();
  std::array<std::size_t, max_rank> pick{};
  TileTuple first{}, t{}, best{};
  for (;;) {
    for (int k = 0; k < n; ++k)
      first[static_cast<std::size_t>(k)] =
          classes[static_cast<std::size_t>(k)][pick[static_cast<std::size_t>(k)]].first;
    if (allowed(first.data())) {
      t = first;
      for (;;) {
        // A generator that makes the tuple smaller rejects it at once (most tuples of a large
        // group's grid are not canonical); the whole group decides the rest.
        std::size_t element = 0;
        int stabiliser = 0;
        bool canonical = !smaller_under_a_generator(t);
        if (canonical) {
          canonical_image(t, best, element, stabiliser);
          canonical = best == t;
        }
        if (canonical) {
          sparse_.emplace(block_id(t.data()), num_blocks());
          add_canonical_block(t, stabiliser);
        }
        int k = n - 1;
        while (k >= 0) {
          const auto& run = classes[static_cast<std::size_t>(k)][pick[static_cast<std::size_t>(k)]];
          if (++t[static_cast<std::size_t>(k)] < run.second) break;
          t[static_cast<std::size_t>(k--)] = run.first;
        }
        if (k < 0) break;
      }
    }
    int k = n - 1;
    while (k >= 0 &&
           ++pick[static_cast<std::size_t>(k)] == classes[static_cast<std::size_t>(k)].size())
      pick[static_cast<std::size_t>(k--)] = 0;
    if (k < 0) break;
  }
}

bool BlockShape::smaller_under_a_generator(const TileTuple& t) const {
  TileTuple image{};
  for (const SymmetryElement& g : group_.generators()) {
    for (int k = 0; k < rank(); ++k)
      image[static_cast<std::size_t>(k)] =
          t[static_cast<std::size_t>(g.perm[static_cast<std::size_t>(k)])];
    if (lexicographically_less(image.data(), t.data(), rank())) return true;
  }
  return false;
}

BlockShape::StoredAt BlockShape::find_sparse(block_id_t id) const {
  const int n = rank();
  TileTuple t{}, best{};
  for (int k = 0; k < n; ++k) {
    const auto stride = strides_[static_cast<std::size_t>(k)];
    t[static_cast<std::size_t>(k)] = static_cast<tile_t>(id / stride);
    id %= stride;
  }
  if (!allowed(t.data())) return {};
  std::size_t element = 0;
  int stabiliser = 0;
  canonical_image(t, best, element, stabiliser);
  const auto found = sparse_.find(block_id(best.data()));
  if (found == sparse_.end()) return {};
  return {found->second, static_cast<int>(element)};
}

extent_t BlockShape::dense_elements() const {
  extent_t size = 1;
  for (int k = 0; k < rank(); ++k)
    size = detail::checked_product<extent_t>(size, space(k).size(), "the dense tensor's elements");
  return size;
}

bool BlockShape::operator==(const BlockShape& other) const {
  if (this == &other) return true;
  if (rank() != other.rank() || irrep_ != other.irrep_ || spin_sides_ != other.spin_sides_)
    return false;
  for (int k = 0; k < rank(); ++k)
    if (!(space(k) == other.space(k))) return false;
  // Groups generated differently may be equal: compare their element sets.
  if (group_.order() != other.group_.order()) return false;
  for (const SymmetryElement& g : group_.elements())
    if (std::find(other.group_.elements().begin(), other.group_.elements().end(), g) ==
        other.group_.elements().end())
      return false;
  return true;
}

std::string BlockShape::space_names() const {
  std::vector<std::string> names;
  for (int k = 0; k < rank(); ++k) names.push_back(space(k).name());
  return detail::concat("[", detail::join(names, ", "), "]");
}

std::string BlockShape::describe() const {
  return detail::concat(space_names(), " with ", group_.order(), " symmetry elements, ",
                        num_blocks(), " stored blocks");
}

}  // namespace tilecc
