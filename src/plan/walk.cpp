// The inspector's walk: over the canonical output blocks, the summed tile tuples of each (one
// orbit representative each, weighted), the operand blocks they locate, the recipe and sign of
// each product; units grouped for stacking as they are made; then tasks.
#include <algorithm>
#include <optional>

#include "label_ids.hpp"
#include "prices.hpp"
#include "stacking.hpp"
#include "summed_tuples.hpp"
#include "tilecc/error.hpp"

namespace tilecc {
namespace {

using detail::Ids;

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

}  // namespace

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
  output_axes_ = detail::axes_between(r_labels, c_ids);

  // H: summed-label permutations realised by both operands. Opposite signs mean A*B sums to 0.
  std::pmr::memory_resource* memory = prices.memory();
  const auto ha = detail::summed_symmetries(sa, a_ids, nc, summed.size(), memory),
             hb = detail::summed_symmetries(sb, b_ids, nc, summed.size(), memory);
  std::pmr::vector<Ids> h(memory);
  for (const detail::SummedSymmetry& x : ha) {
    auto it = std::find_if(hb.begin(), hb.end(),
                           [&](const detail::SummedSymmetry& y) { return y.rho == x.rho; });
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
    const Ids stored_a = detail::stored_labels(a_ids, sa.element_axes(element_a)),
              stored_b = detail::stored_labels(b_ids, sb.element_axes(element_b));
    Recipe r;
    const auto da = detail::in_place(stored_a, rows), db = detail::in_place(stored_b, cols);
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
    r.a_rows = detail::axes_between(stored_a, concat(rows, order));
    if (r.a.permute) r.a.axes = r.a_rows;
    if (r.b.permute) r.b.axes = detail::axes_between(stored_b, concat(order, cols));
    recipes_.push_back(r);
    b_layouts.push_back(detail::b_layout_key(r, sb.rank()));
    read.recipe = static_cast<std::int32_t>(recipes_.size() - 1);
    read.permuted = (r.a.permute ? 1 : 0) + (r.b.permute ? 1 : 0);
    read.sign = sa.element_sign(element_a) * sb.element_sign(element_b);
    read.b_layout_bits = detail::b_layout_bits(b_layouts.back());
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
  detail::SummedTuples tuples(summed_space, nk, h, &a_stride[static_cast<std::size_t>(nc)],
                              &b_stride[static_cast<std::size_t>(nc)], memory);

  const BlockShape::BlockIndex a_index = sa.block_index(), b_index = sb.block_index();
  std::array<const Tile*, max_rank> c_tiles{};  // per C position, its space's tiles
  for (int p = 0; p < nc; ++p) c_tiles[static_cast<std::size_t>(p)] = sc.space(p).tiles().data();
  std::pmr::vector<Unit> units(memory);
  std::span<const detail::SummedTuples::Entry>
      list;             // tuples.of_irrep(list_irrep), asked again only
  int list_irrep = -1;  // when a unit's row irrep differs
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
    for (const detail::SummedTuples::Entry& e : list) {
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
      b_reads = detail::mix_b_read(b_reads, at_b.slot, read.b_layout_bits, e.k);
    }
    if (num_products() == first) continue;
    Unit unit;
    unit.member.c_slot = slot;
    unit.member.first = first;
    unit.member.m = m;
    unit.n = n;
    unit.last = num_products();
    unit.b_reads = b_reads;
    unit.flops =
        2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(summed_k);
    executed_flops_ += unit.flops;
    units.push_back(unit);
    if (grouper) grouper->join(*this, units, b_layouts);
  }
  // Give back the room reserve_ahead left unused, when it is more than the products themselves.
  if (products_.capacity() > 2 * products_.size()) products_.shrink_to_fit();
  prices.index_recipes(recipes_);
  if (layout_ != PlanLayout::inspector) {
    // TCE's tasks and staged ones: one per output block (staged ones cut into slabs where the
    // inspector would), in slot order, never stacked.
    std::vector<slot_t> task_slots;
    for (std::size_t i = 0; i < units.size(); ++i) {
      stack(units, {&i, 1}, prices);
      task_slots.push_back(units[i].member.c_slot);
    }
    if (layout_ == PlanLayout::tce) build_tce_loop(task_slots);
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

}  // namespace tilecc
