#include "tilecc/plan.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <optional>

#include "detail/labels.hpp"
#include "tilecc/error.hpp"
#include "tilecc/trace.hpp"

namespace tilecc {
namespace {

// The plan's labels as small integers (C's labels first, then the summed ones), so that working
// out block layouts compares bytes instead of strings. Each list holds at most one operand's
// labels, max_rank = 8 of them, one byte each: a list is one 64-bit word (id j in its byte j,
// unused bytes zero), built, cut and joined by register arithmetic. As an array written byte by
// byte, every copy of a list read it whole before those stores had reached the cache, and waited
// for them (a failed store forward): several times per first read of an element pair, which took
// a tenth of a microsecond each.
class Ids {
 public:
  Ids() = default;
  /** A list of n ids to be given by set(). */
  static Ids unset(int n) { return {0, n}; }
  void push_back(int id) {
    word_ |= std::uint64_t{static_cast<std::uint8_t>(id)} << (8 * size_);
    ++size_;
  }
  /** Gives position j its id (once: ids are or-ed in). */
  void set(int j, int id) { word_ |= std::uint64_t{static_cast<std::uint8_t>(id)} << (8 * j); }
  int size() const { return size_; }
  int operator[](int j) const { return static_cast<std::int8_t>(word_ >> (8 * j)); }
  /** Position of `id`, or -1. */
  int find(int id) const {
    for (int j = 0; j < size_; ++j)
      if ((*this)[j] == id) return j;
    return -1;
  }
  /** The first n ids, and the ids from position n on. */
  Ids first(int n) const { return {word_ & ~shifted_up(~std::uint64_t{0}, n), n}; }
  Ids from(int n) const { return {shifted_down(word_, n), size_ - n}; }
  bool operator==(const Ids& other) const = default;
  friend Ids concat(const Ids& x, const Ids& y) {
    return {x.word_ | shifted_up(y.word_, x.size_), x.size_ + y.size_};
  }

  /** Iteration over the ids in order, for range-for. */
  class Iterator {
   public:
    Iterator(std::uint64_t word, int left) : word_(word), left_(left) {}
    int operator*() const { return static_cast<std::int8_t>(word_); }
    Iterator& operator++() {
      word_ >>= 8;
      --left_;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return left_ != other.left_; }

   private:
    std::uint64_t word_;
    int left_;
  };
  Iterator begin() const { return {word_, size_}; }
  Iterator end() const { return {0, 0}; }

 private:
  Ids(std::uint64_t word, int size) : word_(word), size_(size) {}
  // Shifts by 8 * n bytes for n up to 8, in two shifts of at most 32 (one of 64 is undefined).
  static std::uint64_t shifted_up(std::uint64_t w, int n) { return w << (4 * n) << (4 * n); }
  static std::uint64_t shifted_down(std::uint64_t w, int n) { return w >> (4 * n) >> (4 * n); }
  std::uint64_t word_ = 0;
  int size_ = 0;
};

// Labels carried by the axes of the stored block that `axes` reads: stored axis axes[j] carries
// the operand's j-th label.
Ids stored_labels(const Ids& labels, const Axes& axes) {
  Ids s = Ids::unset(labels.size());
  for (int j = 0; j < labels.size(); ++j) s.set(axes[static_cast<std::size_t>(j)], labels[j]);
  return s;
}

// Axes that turn a block whose axes carry `from` into one whose axes carry `to`.
Axes axes_between(const Ids& from, const Ids& to) {
  Axes axes{};
  for (int j = 0; j < to.size(); ++j)
    axes[static_cast<std::size_t>(j)] = static_cast<std::int8_t>(from.find(to[j]));
  return axes;
}

struct InPlace {
  Ids summed_order;
  bool fixed_first;  // the stored block is [fixed..., summed...]
};

// Can a stored block whose axes carry `stored` be read in place as a matrix with the `fixed`
// labels (in this order) on one side and all summed labels on the other?
std::optional<InPlace> in_place(const Ids& stored, const Ids& fixed) {
  const int nf = fixed.size(), n = stored.size();
  if (stored.first(nf) == fixed) return InPlace{stored.from(nf), true};
  if (stored.from(n - nf) == fixed) return InPlace{stored.first(n - nf), false};
  return std::nullopt;
}

// A permutation of the summed labels (rho[q]: the summed-label index that q maps to) that a
// symmetry element of an operand realises while fixing its other labels, with that element's sign.
struct SummedSymmetry {
  Ids rho;
  int sign;
};

// The distinct summed-label permutations an operand with these label ids realises. The summed
// labels' ids are first_summed, first_summed + 1, ... (LabelIds numbers them last), so the summed
// label an id stands for is worked out, not searched for.
std::pmr::vector<SummedSymmetry> summed_symmetries(const BlockShape& shape, const Ids& labels,
                                                   int first_summed, int summed_count,
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

// How a recipe reads B blocks (in place, transposed or permuted, and by which axes), as a number:
// units whose products read the same B blocks the same way can be stacked.
std::uint64_t b_layout_key(const ContractionPlan::Recipe& r, int b_rank) {
  std::uint64_t key = (r.b.permute ? 2 : 0) + (r.b.trans ? 1 : 0);
  for (int j = 0; j < b_rank; ++j)
    key = key * 8 + static_cast<std::uint64_t>(r.b.axes[static_cast<std::size_t>(j)]);
  return key;
}

// A unit's hash of its B reads, `h`, extended by one product's: its B block, the layout it is
// read in (b_layout_key, spread by b_layout_bits) and its summed extent. One multiply per product,
// in the walk. It hashes what StackingGrouper compares exactly (with the unit's n): change the two
// together.
std::uint64_t mix_b_read(std::uint64_t h, slot_t b_slot, std::uint64_t b_layout_bits, extent_t k) {
  const std::uint64_t v =
      static_cast<std::uint64_t>(b_slot) ^ (static_cast<std::uint64_t>(k) << 24) ^ b_layout_bits;
  return (h ^ v) * 0x100000001b3ULL;
}
// b_layout_key spread over the bits mix_b_read leaves to it, once per recipe.
std::uint64_t b_layout_bits(std::uint64_t b_layout) { return (b_layout << 40) ^ (b_layout >> 24); }

// Room in a plan's products for the next output block of the walk, whose list of summed tuples
// has `list` of them (at most one product each), with `blocks_left` blocks, this one included,
// still to walk. Short of room, it takes room for every block left at this list's length: a plan
// then reallocates its products once or twice, rather than doubling up from a few, each time
// copying every product so far into memory that the walk then writes cold. The bound counts
// tuples whose blocks turn out zero; where lists are long and mostly zero (spin) it could exceed
// memory, so past 2^20 products the room only doubles. The walk gives unused room back at its end.
void reserve_ahead(std::vector<ContractionPlan::Product>& products, std::size_t list,
                   std::size_t blocks_left) {
  constexpr std::size_t most_reserved_ahead = std::size_t{1} << 20;
  if (products.capacity() - products.size() >= list) return;
  const std::size_t needed = products.size() + list;
  const std::size_t ahead = products.size() + list * blocks_left;
  products.reserve(
      std::min(ahead, std::max({needed, 2 * products.capacity(), most_reserved_ahead})));
}

// Zeroing a task's R before its GEMMs accumulate into it, priced as a copy of its elements.
double fill_seconds(const CostModel& model, extent_t elements) {
  return model.permute_seconds(PermuteShape{PermuteKind::copy, elements, 1});
}

// A whole stored block, priced by what its shape keeps of it (its extents, size and pattern).
double price_block(PermutePricer& price, const BlockShape& shape, slot_t slot) {
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

}  // namespace

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
  BlockPermutePrices a, b;
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

// Each distinct label gets the next id in the order the labels first appear in C, A and B: on
// valid input C's labels are then 0..nc-1 by position and the summed ones follow in A's order.
struct ContractionPlan::LabelIds {
  static constexpr int most = 3 * max_rank;  // distinct labels of three operands
  static_assert(most <= 32, "a label id must fit the 32-bit sets below");
  Ids c, a, b;
  // Bit id set: the operand carries label id. A carries it at position a_at[id], B at b_at[id],
  // else -1; on valid input C carries label id at position id.
  std::uint32_t c_set = 0, a_set = 0, b_set = 0;
  std::array<std::int8_t, most> a_at, b_at;
  int count = 0;      // distinct labels
  bool clean = true;  // no operand has an empty label or one label twice

  /** Each operand's labels, one per index (the caller has checked their number). Most labels
   *  are one letter, found by that letter; longer ones by comparison with those met before. */
  LabelIds(const Operand& oc, const Operand& oa, const Operand& ob) {
    a_at.fill(-1);
    b_at.fill(-1);
    std::array<std::int8_t, 256> by_letter;
    by_letter.fill(-1);
    std::array<const std::string*, most> longer{};  // by id, labels of other lengths
    auto id_of = [&](const std::string& l) -> int {
      if (l.size() == 1) {
        std::int8_t& id = by_letter[static_cast<unsigned char>(l[0])];
        if (id < 0) id = static_cast<std::int8_t>(count++);
        return id;
      }
      clean = clean && !l.empty();
      for (int id = 0; id < count; ++id)
        if (longer[static_cast<std::size_t>(id)] != nullptr &&
            *longer[static_cast<std::size_t>(id)] == l)
          return id;
      longer[static_cast<std::size_t>(count)] = &l;
      return count++;
    };
    auto add = [&](const Operand& op, Ids& ids, std::uint32_t& set) {
      for (const std::string& l : op.labels) {
        const int id = id_of(l);
        clean = clean && (set >> id & 1u) == 0;
        set |= 1u << id;
        ids.push_back(id);
      }
    };
    add(oc, c, c_set);
    add(oa, a, a_set);
    add(ob, b, b_set);
    for (int p = 0; p < a.size(); ++p)
      a_at[static_cast<std::size_t>(a[p])] = static_cast<std::int8_t>(p);
    for (int p = 0; p < b.size(); ++p)
      b_at[static_cast<std::size_t>(b[p])] = static_cast<std::int8_t>(p);
  }
  /** Each output label in exactly one operand and every other label in both. */
  bool valid() const {
    const std::uint32_t summed = (a_set | b_set) & ~c_set;
    return clean && (c_set & ~(a_set ^ b_set)) == 0 && (summed & ~(a_set & b_set)) == 0;
  }
};

ContractionPlan::ContractionPlan(Operand c, Operand a, Operand b, PlanLayout layout,
                                 const CostModel& model, int workers)
    : c_(std::move(c)), a_(std::move(a)), b_(std::move(b)), layout_(layout), workers_(workers) {
  inspector_started_ = clock_seconds();
  TILECC_CHECK(workers >= 1, "a plan is cut for at least one worker, got ", workers,
               "; pass the number of threads that will run it.");
  // The labels are checked at once, as sets; only a contraction that fails is checked label by
  // label, for the message that names its first fault.
  auto counted = [](const Operand& op) {
    return op.shape != nullptr && static_cast<int>(op.labels.size()) == op.shape->rank();
  };
  if (!counted(c_) || !counted(a_) || !counted(b_)) report_label_fault();
  const LabelIds labels(c_, a_, b_);
  if (!labels.valid()) report_label_fault();
  // A label means one space wherever it appears.
  for (int p = 0; p < labels.c.size(); ++p) {
    if (const int pa = labels.a_at[static_cast<std::size_t>(p)]; pa >= 0)
      detail::check_same_space(c_.labels[static_cast<std::size_t>(p)], a_, pa, c_, p);
    if (const int pb = labels.b_at[static_cast<std::size_t>(p)]; pb >= 0)
      detail::check_same_space(c_.labels[static_cast<std::size_t>(p)], b_, pb, c_, p);
  }
  for (int p = 0; p < labels.a.size(); ++p)
    if (const int pb = labels.b_at[static_cast<std::size_t>(labels.a[p])]; pb >= 0)
      detail::check_same_space(a_.labels[static_cast<std::size_t>(p)], a_, p, b_, pb);
  Prices prices(model, *a_.shape, *b_.shape);
  build(labels, prices);
  account_tasks(prices);
  inspector_seconds_ = clock_seconds() - inspector_started_;
}

void ContractionPlan::report_label_fault() const {
  detail::check_labels(c_);
  detail::check_labels(a_);
  detail::check_labels(b_);
  for (std::size_t p = 0; p < c_.labels.size(); ++p) {
    const std::string& l = c_.labels[p];
    const int pa = detail::find_label(a_.labels, l), pb = detail::find_label(b_.labels, l);
    TILECC_CHECK(pa >= 0 || pb >= 0, "output label '", l, "' of ", detail::show(c_),
                 " appears in neither ", detail::show(a_), " nor ", detail::show(b_),
                 "; every output label must come from an operand.");
    TILECC_CHECK(pa < 0 || pb < 0, "label '", l, "' appears in ", detail::show(a_), ", ",
                 detail::show(b_), " and the output ", detail::show(c_),
                 "; batched (Hadamard) labels are not supported, so sum or keep each label once.");
    if (pa >= 0) detail::check_same_space(l, a_, pa, c_, static_cast<int>(p));
    if (pb >= 0) detail::check_same_space(l, b_, pb, c_, static_cast<int>(p));
  }
  for (const Operand* op : {&a_, &b_}) {
    const Operand& other = op == &a_ ? b_ : a_;
    for (std::size_t p = 0; p < op->labels.size(); ++p) {
      const std::string& l = op->labels[p];
      const int po = detail::find_label(other.labels, l);
      TILECC_CHECK(po >= 0 || detail::find_label(c_.labels, l) >= 0, "label '", l, "' of ",
                   detail::show(*op), " appears neither in ", detail::show(other),
                   " nor in the output ", detail::show(c_),
                   "; a summed label must appear in"
                   " both operands.");
      if (po >= 0 && op == &a_) detail::check_same_space(l, a_, static_cast<int>(p), b_, po);
    }
  }
  // Not reached: labels that fail as sets fail one of the checks above.
  throw InputError(detail::concat("the labels of ", expression(), " do not form a contraction."));
}

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

void ContractionPlan::build(const LabelIds& labels, Prices& prices) {
  const BlockShape& sc = *c_.shape;
  const BlockShape& sa = *a_.shape;
  const BlockShape& sb = *b_.shape;
  // Label ids: C's labels are 0..nc-1 by position, the summed ones nc.. in A's order.
  const int nc = sc.rank();
  const Ids &c_ids = labels.c, &a_ids = labels.a, &b_ids = labels.b;
  Ids rows, cols, summed;  // M (C order), N (C order), K (A order)
  for (int id = nc; id < labels.count; ++id) summed.push_back(id);
  // Room for the recipes of most plans (one per pair of symmetry elements the walk meets: 82 for
  // the 42 plans of a CCSD update of N2 at tile 16), rather than a vector that reallocates as
  // first reads add them.
  recipes_.reserve(4);
  for (int p = 0; p < nc; ++p) ((labels.a_set >> p & 1u) != 0 ? rows : cols).push_back(p);
  row_labels_ = rows.size();

  dense_flops_ = 2.0;
  for (int p = 0; p < nc; ++p) dense_flops_ *= static_cast<double>(sc.space(p).size());
  for (int id : summed)
    dense_flops_ *= static_cast<double>(sa.space(labels.a_at[static_cast<std::size_t>(id)]).size());

  const Ids r_labels = concat(rows, cols);
  if (c_ids == r_labels) {
    output_ = Output::direct;
  } else if (c_ids == concat(cols, rows)) {
    output_ = Output::transposed;
  } else {
    output_ = Output::buffered;
  }
  for (int q = 0; q < nc; ++q)  // a C label's id is its position
    r_positions_[static_cast<std::size_t>(q)] = static_cast<std::int8_t>(r_labels[q]);
  output_axes_ = axes_between(r_labels, c_ids);

  // H: summed-label permutations realised by both operands. Opposite signs mean A*B sums to 0.
  std::pmr::memory_resource* memory = prices.memory();
  const auto ha = summed_symmetries(sa, a_ids, nc, summed.size(), memory),
             hb = summed_symmetries(sb, b_ids, nc, summed.size(), memory);
  std::pmr::vector<Ids> h(memory);
  for (const SummedSymmetry& x : ha) {
    auto it =
        std::find_if(hb.begin(), hb.end(), [&](const SummedSymmetry& y) { return y.rho == x.rho; });
    if (it == hb.end()) continue;
    if (x.sign * it->sign < 0) {
      zero_by_symmetry_ = true;
      return;
    }
    h.push_back(x.rho);
  }
  summed_symmetry_order_ = static_cast<int>(h.size());

  // A recipe and the sign of a product depend only on the symmetry elements that map the A and
  // B blocks to their stored ones, so they are cached by that pair.
  struct Read {
    std::int32_t recipe = -1;
    int permuted = 0;  // operands the recipe permutes
    double sign = 1.0;
    std::uint64_t b_layout_bits = 0;  // b_layout_bits() of how the recipe reads B
  };
  const std::size_t order_b = sb.group().order();
  std::pmr::vector<Read> read_of(sa.group().order() * order_b, memory);
  std::pmr::vector<std::uint64_t> b_layouts(memory);  // per recipe: how it reads B (b_layout_key)
  // Works out the read of an element pair the walk meets for the first time; read_for's common
  // path is then the lookup alone, small enough to stay inline in the walk.
  auto first_read = [&](Read& read, int element_a, int element_b) {
    const Ids stored_a = stored_labels(a_ids, sa.element_axes(element_a)),
              stored_b = stored_labels(b_ids, sb.element_axes(element_b));
    Recipe r;
    const auto da = in_place(stored_a, rows), db = in_place(stored_b, cols);
    Ids order;
    if (da) {
      order = da->summed_order;
      r.a.trans = !da->fixed_first;
    }
    if (db && (!da || db->summed_order == order)) {
      order = db->summed_order;
      r.b.trans = db->fixed_first;
    } else if (da) {
      r.b.permute = true;
    }
    if (!da) {
      if (!db) order = summed;  // neither in place: K in A's label order
      r.a.permute = true;
      if (!db) r.b.permute = true;
    }
    r.a_rows = axes_between(stored_a, concat(rows, order));
    if (r.a.permute) r.a.axes = r.a_rows;
    if (r.b.permute) r.b.axes = axes_between(stored_b, concat(order, cols));
    recipes_.push_back(r);
    b_layouts.push_back(b_layout_key(r, sb.rank()));
    read.recipe = static_cast<std::int32_t>(recipes_.size() - 1);
    read.permuted = (r.a.permute ? 1 : 0) + (r.b.permute ? 1 : 0);
    read.sign = sa.element_sign(element_a) * sb.element_sign(element_b);
    read.b_layout_bits = b_layout_bits(b_layouts.back());
  };
  auto read_for = [&](int element_a, int element_b) -> const Read& {
    Read& read = read_of[static_cast<std::size_t>(element_a) * order_b +
                         static_cast<std::size_t>(element_b)];
    if (read.recipe < 0) [[unlikely]]
      first_read(read, element_a, element_b);
    return read;
  };

  // The walk over tile tuples keeps each operand block's index in its tile grid as a sum of
  // tile * stride, so that locating a block is one table lookup. Strides per output position and
  // per summed label (0 where the operand does not have the label).
  const auto nk = static_cast<std::size_t>(summed.size());
  std::array<block_id_t, 2 * max_rank> a_stride{}, b_stride{};  // by label id
  for (int p = 0; p < sa.rank(); ++p)
    a_stride[static_cast<std::size_t>(a_ids[p])] = sa.grid_stride(p);
  for (int p = 0; p < sb.rank(); ++p)
    b_stride[static_cast<std::size_t>(b_ids[p])] = sb.grid_stride(p);
  std::array<const IndexSpace*, max_rank> summed_space{};
  for (std::size_t q = 0; q < nk; ++q) {
    summed_space[q] = &sa.space(labels.a_at[static_cast<std::size_t>(summed[static_cast<int>(q)])]);
    if (summed_space[q]->num_tiles() == 0) return;  // an empty sum: no products
  }
  SummedTuples tuples(summed_space, nk, h, &a_stride[static_cast<std::size_t>(nc)],
                      &b_stride[static_cast<std::size_t>(nc)], memory);

  const BlockShape::BlockIndex a_index = sa.block_index(), b_index = sb.block_index();
  std::array<const Tile*, max_rank> c_tiles{};  // per C position, its space's tiles
  for (int p = 0; p < nc; ++p) c_tiles[static_cast<std::size_t>(p)] = sc.space(p).tiles().data();
  std::pmr::vector<Unit> units(memory);
  std::span<const SummedTuples::Entry> list;  // tuples.of_irrep(list_irrep), asked again only
  int list_irrep = -1;                        // when a unit's row irrep differs
  const auto blocks = static_cast<std::size_t>(sc.num_blocks());
  units.reserve(blocks);
  // TCE's layout never stacks: only the inspector's groups its units.
  std::optional<StackingGrouper> grouper;
  if (layout_ == PlanLayout::inspector) grouper.emplace(blocks, memory);
  for (slot_t slot = 0; slot < sc.num_blocks(); ++slot) {
    const tile_t* tc = sc.block_tiles(slot);
    const std::int64_t first = num_products();
    extent_t m = 1, n = 1;
    block_id_t a_base = 0, b_base = 0;
    int row_irrep = sa.irrep();
    // A row tile places the A block and adds to M and the row irrep; a column tile places the B
    // block and adds to N.
    for (int id : rows) {
      const auto p = static_cast<std::size_t>(id);
      const Tile& tile = c_tiles[p][tc[p]];
      a_base += static_cast<block_id_t>(tc[p]) * a_stride[p];
      m *= tile.extent;
      row_irrep ^= tile.irrep;
    }
    for (int id : cols) {
      const auto p = static_cast<std::size_t>(id);
      b_base += static_cast<block_id_t>(tc[p]) * b_stride[p];
      n *= c_tiles[p][tc[p]].extent;
    }
    std::uint64_t b_reads = static_cast<std::uint64_t>(n);
    // A's irrep and its row tiles' fix the irrep of the summed tiles.
    extent_t summed_k = 0;
    if (row_irrep != list_irrep) {
      list = tuples.of_irrep(row_irrep);
      list_irrep = row_irrep;
    }
    reserve_ahead(products_, list.size(), blocks - static_cast<std::size_t>(slot));
    for (const SummedTuples::Entry& e : list) {
      const BlockShape::StoredAt at_a = a_index[a_base + e.a_offset];
      if (at_a.slot < 0) continue;  // spin or irreps make the A block zero
      const BlockShape::StoredAt at_b = b_index[b_base + e.b_offset];
      if (at_b.slot < 0) continue;
      const Read& read = read_for(at_a.element, at_b.element);
      products_.emplace_back(static_cast<std::int32_t>(at_a.slot),
                             static_cast<std::int32_t>(at_b.slot), read.recipe,
                             read.sign * e.weight, e.k);
      summed_k += e.k;
      permuted_operands_ += read.permuted;
      b_reads = mix_b_read(b_reads, at_b.slot, read.b_layout_bits, e.k);
    }
    if (num_products() == first) continue;
    // Written field by field into its place in `units` (reserved above, so it never moves): a
    // local Unit pushed at the end was copied through the stack by wide loads of fields just
    // stored one by one, loads that must wait for those stores.
    Unit& unit = units.emplace_back();
    unit.member.c_slot = slot;
    unit.member.first = first;
    unit.member.m = m;
    unit.n = n;
    unit.last = num_products();
    unit.b_reads = b_reads;
    unit.flops =
        2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(summed_k);
    executed_flops_ += unit.flops;
    if (grouper) grouper->join(*this, units, b_layouts);
  }
  // Give back the room reserve_ahead left unused, when it is more than the products themselves.
  if (products_.capacity() > 2 * products_.size()) products_.shrink_to_fit();
  prices.index_recipes(recipes_);
  if (layout_ == PlanLayout::tce) {
    // TCE's tasks: one per output block, in loop (slot) order, never stacked.
    std::vector<slot_t> task_slots;
    for (std::size_t i = 0; i < units.size(); ++i) {
      stack(units, {&i, 1}, prices);
      task_slots.push_back(units[i].member.c_slot);
    }
    build_tce_loop(task_slots);
    return;
  }
  const StackingGroups groups = grouper->groups(memory);
  // Each unit becomes one member, of one task at most (slabs add more): room for them up front,
  // rather than vectors that reallocate and copy as they grow.
  members_.reserve(units.size());
  tasks_.reserve(units.size());
  for (std::size_t g = 0; g + 1 < groups.starts.size(); ++g)
    stack(
        units,
        std::span(groups.units).subspan(groups.starts[g], groups.starts[g + 1] - groups.starts[g]),
        prices);
}

void ContractionPlan::build_tce_loop(const std::vector<slot_t>& task_slots) {
  // The loop nest runs over every tile tuple of C that is canonical under C's permutation group
  // (TCE puts that restriction in its loop bounds); spin, irrep and emptiness are tested only
  // inside, so those tuples are null tasks.
  const BlockShape& sc = *c_.shape;
  const int n = sc.rank();
  for (int k = 0; k < n; ++k)
    if (sc.space(k).num_tiles() == 0) return;
  std::size_t next_task = 0;
  TileTuple t{};
  for (;;) {
    if (sc.is_canonical(t.data())) {
      task_id_t task = -1;
      if (next_task < task_slots.size()) {
        const auto ref = sc.locate(t.data());
        if (ref && ref->slot == task_slots[next_task]) task = static_cast<task_id_t>(next_task++);
      }
      loop_.push_back(task);
    }
    int k = n;
    while (k > 0 && ++t[static_cast<std::size_t>(k - 1)] == sc.space(k - 1).num_tiles())
      t[static_cast<std::size_t>(--k)] = 0;
    if (k == 0) break;
  }
  TILECC_ASSERT(next_task == task_slots.size());
}

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
    if (layout_ == PlanLayout::inspector && units[group[g]].flops > most_flops &&
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
    // Written field by field into its place in tasks_: a local Task pushed at the end was copied
    // by wide loads of fields just stored one by one, loads that had to wait for those stores (as
    // a Unit in build()'s walk; likewise a Member given its row offset before it was pushed).
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
  const double output = price_block(prices.output(*this), *c_.shape, unit.member.c_slot);
  double extra = fill_seconds(model, static_cast<extent_t>(copies) * m * n) + copies * output;
  if (output_ == Output::buffered) extra -= copies * (fill_seconds(model, m * n) + output);
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
    Task& task = tasks_.emplace_back();  // written in place, as in stack()
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

void ContractionPlan::estimate(const CostModel& model) {
  Prices prices(model, *a_.shape, *b_.shape);
  prices.index_recipes(recipes_);
  account_tasks(prices);
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
  auto permute = [](BlockPermutePrices& operand, slot_t slot, int layout, const Task& task,
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
    if (through_r) seconds += fill_seconds(model, r_elements);
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
        seconds += task.slab.side == Side::whole ? price_block(output, *c_.shape, mem[g].c_slot)
                                                 : output(c_extents(mem[g].c_slot, task, extents));
    }
    modelled_.push_back(seconds);
  }
  correct(correction_);
}

void ContractionPlan::correct(const ModelCorrection& correction) {
  correction_ = correction;
  // A context corrects every plan again before each run: a copy of the predictions made at build
  // time was only overwritten there, and cost an allocation per plan in the inspector.
  if (correction.scale == 1.0 && correction.overhead == 0.0) {
    estimated_.clear();
    return;
  }
  estimated_.resize(modelled_.size());
  for (std::size_t t = 0; t < modelled_.size(); ++t)
    estimated_[t] = correction.scale * modelled_[t] + correction.overhead;
}

void ContractionPlan::record_measured(std::span<const double> seconds) {
  TILECC_CHECK(seconds.size() == tasks_.size(), "measured times for ", seconds.size(),
               " tasks given to a plan of ", tasks_.size(), " tasks.");
  measured_.assign(seconds.begin(), seconds.end());
}

std::span<const double> ContractionPlan::costs(bool refine) const {
  return refine && !measured_.empty() ? std::span<const double>(measured_)
                                      : std::span<const double>(estimated_seconds());
}

ModelError ContractionPlan::model_error() const {
  std::vector<double> errors;
  const std::vector<double>& estimated = estimated_seconds();
  for (std::size_t t = 0; t < measured_.size(); ++t)
    if (measured_[t] > 0.0) errors.push_back(std::abs(estimated[t] - measured_[t]) / measured_[t]);
  ModelError e;
  e.tasks = static_cast<std::int64_t>(errors.size());
  if (errors.empty()) return e;
  std::sort(errors.begin(), errors.end());
  auto quantile = [&](double q) {
    return errors[std::min(errors.size() - 1,
                           static_cast<std::size_t>(q * static_cast<double>(errors.size())))];
  };
  e.median = quantile(0.5);
  e.p90 = quantile(0.9);
  return e;
}

std::string ContractionPlan::expression() const {
  return detail::show(c_) + " += " + detail::show(a_) + " * " + detail::show(b_);
}

std::string ContractionPlan::summary() const {
  char buf[768];
  const char* out = output_ == Output::direct       ? "direct"
                    : output_ == Output::transposed ? "transposed"
                                                    : "buffered";
  double predicted = 0.0;
  for (double s : estimated_seconds()) predicted += s;
  std::snprintf(buf, sizeof buf,
                "%s: %zu %stasks (%zu loop tuples), %lld products, %.3g of %.3g dense "
                "flops (%.1f%%), %lld operand permutations, output %s, scratch %.2f MiB/worker, "
                "predicted %.3g ms of task time, inspector %.3g ms",
                expression().c_str(), tasks_.size(), layout_ == PlanLayout::tce ? "TCE " : "",
                loop_.size(), static_cast<long long>(products_.size()), executed_flops_,
                dense_flops_, dense_flops_ > 0 ? 100.0 * executed_flops_ / dense_flops_ : 0.0,
                static_cast<long long>(permuted_operands_), out,
                static_cast<double>(scratch_bytes_) / 1048576.0, predicted * 1e3,
                inspector_seconds_ * 1e3);
  std::string text = buf;
  if (!policy_.empty()) text += ", policy " + policy_;
  if (workers_ > 1) {
    const auto slabs = std::count_if(tasks_.begin(), tasks_.end(),
                                     [](const Task& t) { return t.slab.side != Side::whole; });
    text += ", tasks cut for " + std::to_string(workers_) + " workers";
    if (slabs > 0) text += " (" + std::to_string(slabs) + " slabs of output blocks)";
  }
  if (const ModelError e = model_error(); e.tasks > 0) {
    std::snprintf(buf, sizeof buf, ", model error per task median %.0f%% p90 %.0f%%",
                  100.0 * e.median, 100.0 * e.p90);
    text += buf;
  }
  return text;
}

}  // namespace tilecc
