#include "tilecc/ops.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <set>

#include "detail/labels.hpp"
#include "tilecc/error.hpp"
#include "tilecc/kernels/permute.hpp"

namespace tilecc {
namespace {

void block_extents(const BlockShape& s, slot_t slot, extent_t* extents) {
  for (int k = 0; k < s.rank(); ++k) extents[k] = s.block_extent(slot, k);
}

Axes inverse(const std::vector<int>& perm) {
  Axes inv{};
  for (std::size_t k = 0; k < perm.size(); ++k)
    inv[static_cast<std::size_t>(perm[k])] = static_cast<std::int8_t>(k);
  return inv;
}

// Calls f(dense_offset, block_offset, run) for each contiguous run of a block inside the dense
// array whose tiles are `tiles` (row-major both).
template <class F>
void for_each_run(const BlockShape& s, const tile_t* tiles, F&& f) {
  const int n = s.rank();
  extent_t dense_stride[max_rank], start[max_rank], extent[max_rank], index[max_rank] = {};
  extent_t stride = 1;
  for (int k = n - 1; k >= 0; --k) {
    dense_stride[k] = stride;
    stride *= s.space(k).size();
    const Tile& t = s.space(k).tile(tiles[k]);
    start[k] = t.offset;
    extent[k] = t.extent;
  }
  if (n == 0) {
    f(extent_t{0}, extent_t{0}, extent_t{1});
    return;
  }
  const extent_t run = extent[n - 1];
  extent_t block_offset = 0;
  for (;;) {
    extent_t d = 0;
    for (int k = 0; k < n; ++k) d += (start[k] + index[k]) * dense_stride[k];
    f(d, block_offset, run);
    block_offset += run;
    int k = n - 2;
    while (k >= 0 && ++index[k] == extent[k]) index[k--] = 0;
    if (k < 0) return;
  }
}

}  // namespace

void scale(BlockTensor& t, double alpha) {
  const BlockShape& s = t.shape();
  for (slot_t b = 0; b < s.num_blocks(); ++b) {
    if (!t.store().owns(b)) continue;
    double* x = t.block(b);
    const extent_t n = s.block_size(b);
    for (extent_t e = 0; e < n; ++e) x[e] *= alpha;
  }
  t.store().complete_writes();
}

void add(const Operand& c_labels, BlockTensor& c, const Operand& a_labels, const BlockTensor& a,
         double alpha, double beta, Executor& executor) {
  detail::check_labels(c_labels);
  detail::check_labels(a_labels);
  TILECC_CHECK(&c != &a, "the output ", detail::show(c_labels),
               " is also the operand; write into a new tensor and copy it back.");
  TILECC_CHECK(c_labels.labels.size() == a_labels.labels.size(), detail::show(a_labels), " has ",
               a_labels.labels.size(), " labels but the output ", detail::show(c_labels), " has ",
               c_labels.labels.size(), "; a sum needs the same labels on both sides.");
  std::vector<int> from_c(a_labels.labels.size());
  for (std::size_t p = 0; p < a_labels.labels.size(); ++p) {
    const int pc = detail::find_label(c_labels.labels, a_labels.labels[p]);
    TILECC_CHECK(pc >= 0, "label '", a_labels.labels[p], "' of ", detail::show(a_labels),
                 " is not in the output ", detail::show(c_labels),
                 "; a sum needs the same labels on both sides.");
    detail::check_same_space(a_labels.labels[p], a_labels, static_cast<int>(p), c_labels, pc);
    from_c[p] = pc;
  }
  const BlockShape& cs = c.shape();
  const BlockShape& as = a.shape();
  // Every block on this process's workers, outside the scheduling policy: on several ranks a
  // policy would share the blocks between them, where each rank must compute those it owns.
  executor.for_each(cs.num_blocks(), [&](std::int64_t slot, int worker) {
    if (!c.store().owns(slot)) return;  // its owner computes it
    double* cb = c.block(slot);
    const extent_t size = cs.block_size(slot);
    if (beta == 0.0)
      std::fill_n(cb, size, 0.0);
    else if (beta != 1.0)
      for (extent_t e = 0; e < size; ++e) cb[e] *= beta;
    const tile_t* tc = cs.block_tiles(slot);
    TileTuple ta{};
    for (std::size_t p = 0; p < from_c.size(); ++p) ta[p] = tc[from_c[p]];
    const auto ref = as.locate(ta.data());
    if (!ref) return;  // a zero block of A adds nothing
    // Stored axis ref->axes[j] carries A's label j; C wants its own label order.
    Axes axes{};
    for (std::size_t q = 0; q < from_c.size(); ++q) {
      const int pa = detail::find_label(a_labels.labels, c_labels.labels[q]);
      axes[q] = ref->axes[static_cast<std::size_t>(pa)];
    }
    extent_t extents[max_rank];
    block_extents(as, ref->slot, extents);
    const double* ab = a.store().fetch(ref->slot, executor.workspace(worker).fetched_a);
    kernels::permute(as.rank(), extents, axes, alpha * ref->sign, ab, 1.0, cb);
  });
  c.store().complete_writes();
}

void symmetrize(BlockTensor& t) {
  const BlockShape& s = t.shape();
  const auto group_order = static_cast<int>(s.group().order());
  std::vector<double> sum, tmp;
  extent_t extents[max_rank];
  for (slot_t b = 0; b < s.num_blocks(); ++b) {
    // Blocks no non-trivial element maps to themselves, and other ranks' blocks, stay as they are.
    if (s.orbit_size(b) == group_order || !t.store().owns(b)) continue;
    const tile_t* c = s.block_tiles(b);
    const extent_t size = s.block_size(b);
    block_extents(s, b, extents);
    sum.assign(static_cast<std::size_t>(size), 0.0);
    tmp.resize(static_cast<std::size_t>(size));
    int stabiliser = 0;
    for (const SymmetryElement& g : s.group().elements()) {
      bool fixes = true;
      for (int k = 0; k < s.rank(); ++k)
        fixes = fixes && c[g.perm[static_cast<std::size_t>(k)]] == c[k];
      if (!fixes) continue;
      ++stabiliser;
      kernels::permute(s.rank(), extents, inverse(g.perm), g.sign, t.block(b), 1.0, sum.data());
    }
    double* x = t.block(b);
    for (extent_t e = 0; e < size; ++e) x[e] = sum[static_cast<std::size_t>(e)] / stabiliser;
  }
  t.store().complete_writes();
}

void fill(BlockTensor& t, double value) {
  const BlockShape& s = t.shape();
  const int n = s.rank();
  const auto group_order = static_cast<int>(s.group().order());
  for (slot_t b = 0; b < s.num_blocks(); ++b) {
    if (!t.store().owns(b)) continue;
    double* x = t.block(b);
    const extent_t size = s.block_size(b);
    // Outside diagonal blocks every stored element is the canonical one of its orbit.
    if (s.orbit_size(b) == group_order) {
      std::fill_n(x, size, value);
      continue;
    }
    // In a diagonal block, element y gets sign * value where g.y = y_min is the smallest element
    // of its orbit under the block's stabiliser, and 0 when the symmetry forces it to vanish.
    const tile_t* c = s.block_tiles(b);
    std::vector<const SymmetryElement*> stabiliser;
    for (const SymmetryElement& g : s.group().elements()) {
      bool fixes = true;
      for (int k = 0; k < n; ++k) fixes = fixes && c[g.perm[static_cast<std::size_t>(k)]] == c[k];
      if (fixes) stabiliser.push_back(&g);
    }
    extent_t index[max_rank] = {}, image[max_rank], best[max_rank];
    for (extent_t e = 0; e < size; ++e) {
      std::copy_n(index, n, best);
      int sign = 1;
      bool vanishes = false;
      for (const SymmetryElement* g : stabiliser) {
        for (int k = 0; k < n; ++k) image[k] = index[g->perm[static_cast<std::size_t>(k)]];
        if (std::equal(image, image + n, index) && g->sign < 0) vanishes = true;
        if (std::lexicographical_compare(image, image + n, best, best + n)) {
          std::copy_n(image, n, best);
          sign = g->sign;
        }
      }
      x[e] = vanishes ? 0.0 : sign * value;
      for (int k = n - 1; k >= 0 && ++index[k] == s.block_extent(b, k); --k) index[k] = 0;
    }
  }
  t.store().complete_writes();
}

void fill_random(BlockTensor& t, std::uint64_t seed) {
  const BlockShape& s = t.shape();
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (slot_t b = 0; b < s.num_blocks(); ++b) {
    if (!t.store().owns(b)) continue;
    // A stream per block: the values do not depend on which rank owns which blocks.
    std::seed_seq per_block{seed, static_cast<std::uint64_t>(b)};
    std::mt19937_64 rng(per_block);
    double* x = t.block(b);
    for (extent_t e = 0; e < s.block_size(b); ++e) x[e] = uniform(rng);
  }
  symmetrize(t);
}

void divide_by_denominators(BlockTensor& t, const std::vector<int>& signs, double shift) {
  const BlockShape& s = t.shape();
  const int n = s.rank();
  TILECC_CHECK(static_cast<int>(signs.size()) == n, "denominator signs give ", signs.size(),
               " entries for a tensor with ", n, " indices.");
  for (const SymmetryElement& g : s.group().generators())
    for (int k = 0; k < n; ++k)
      TILECC_CHECK(signs[static_cast<std::size_t>(g.perm[static_cast<std::size_t>(k)])] ==
                       signs[static_cast<std::size_t>(k)],
                   "denominator signs differ between indices ", k, " and ",
                   g.perm[static_cast<std::size_t>(k)],
                   " that the tensor's symmetry swaps, so the result would break that symmetry.");
  extent_t index[max_rank];
  for (slot_t b = 0; b < s.num_blocks(); ++b) {
    if (!t.store().owns(b)) continue;
    const tile_t* tiles = s.block_tiles(b);
    double* x = t.block(b);
    std::fill_n(index, n, extent_t{0});
    const extent_t size = s.block_size(b);
    for (extent_t e = 0; e < size; ++e) {
      double d = shift;
      for (int k = 0; k < n; ++k) {
        const Tile& tile = s.space(k).tile(tiles[k]);
        d += signs[static_cast<std::size_t>(k)] *
             s.space(k).orbitals()[static_cast<std::size_t>(tile.offset + index[k])].energy;
      }
      TILECC_CHECK(std::abs(d) > 1e-14, "the denominator is zero at element ", e, " of block ", b,
                   " of ", s.describe(), "; check the orbital energies and the shift.");
      x[e] /= d;
      for (int k = n - 1; k >= 0 && ++index[k] == s.block_extent(b, k); --k) index[k] = 0;
    }
  }
  t.store().complete_writes();
}

void pack(const BlockTensor& t, double* out) {
  const BlockShape& s = t.shape();
  ScratchBuffer fetched;
  for (slot_t b = 0; b < s.num_blocks(); ++b)
    out = std::copy_n(t.store().fetch(b, fetched), s.block_size(b), out);
}

void unpack(BlockTensor& t, const double* in) {
  const BlockShape& s = t.shape();
  for (slot_t b = 0; b < s.num_blocks(); ++b) {
    if (t.store().owns(b)) std::copy_n(in, s.block_size(b), t.block(b));
    in += s.block_size(b);
  }
  t.store().complete_writes();
}

void from_dense(BlockTensor& t, const double* dense) {
  const BlockShape& s = t.shape();
  for (slot_t b = 0; b < s.num_blocks(); ++b) {
    if (!t.store().owns(b)) continue;
    double* x = t.block(b);
    for_each_run(s, s.block_tiles(b),
                 [&](extent_t d, extent_t o, extent_t run) { std::copy_n(dense + d, run, x + o); });
  }
  t.store().complete_writes();
}

namespace {

/** The tiles of `space` that overlap the orbitals [begin, end) (tiles are sorted, contiguous). */
std::vector<tile_t> overlapping_tiles(const IndexSpace& space, extent_t begin, extent_t end) {
  std::vector<tile_t> out;
  for (tile_t t = 0; t < space.num_tiles(); ++t) {
    const Tile& tile = space.tile(t);
    if (tile.offset < end && tile.offset + tile.extent > begin) out.push_back(t);
  }
  return out;
}

bool same_orbitals(const IndexSpace& a, const IndexSpace& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t p = 0; p < a.orbitals().size(); ++p)
    if (a.orbitals()[p].spin != b.orbitals()[p].spin ||
        a.orbitals()[p].irrep != b.orbitals()[p].irrep)
      return false;
  return true;
}

}  // namespace

void copy_retiled(const BlockTensor& src, BlockTensor& dst) {
  const BlockShape& from = src.shape();
  const BlockShape& to = dst.shape();
  const int n = to.rank();
  TILECC_CHECK(from.rank() == n, "copy_retiled: the tensors have ", from.rank(), " and ", n,
               " indices; give two tensors over the same spaces.");
  for (int k = 0; k < n; ++k)
    TILECC_CHECK(same_orbitals(from.space(k), to.space(k)), "copy_retiled: index ", k,
                 " runs over other orbitals in the two tensors (", from.space(k).describe(),
                 " and ", to.space(k).describe(), "); only the tiling may differ.");
  TILECC_CHECK(from.group().elements().size() == to.group().elements().size() &&
                   from.spin_sides() == to.spin_sides() && from.irrep() == to.irrep(),
               "copy_retiled: the tensors differ in symmetry or sparsity; only the tiling may "
               "differ.");
  dst.zero();
  std::vector<double> image;
  ScratchBuffer fetched;
  extent_t lo[max_rank], hi[max_rank], stored_extents[max_rank], image_extents[max_rank];
  extent_t image_strides[max_rank], dst_strides[max_rank], dst_extents[max_rank];
  for (slot_t b = 0; b < to.num_blocks(); ++b) {
    if (!dst.store().owns(b)) continue;
    const tile_t* d = to.block_tiles(b);
    std::vector<std::vector<tile_t>> candidates(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) {
      const Tile& t = to.space(k).tile(d[k]);
      lo[k] = t.offset;
      hi[k] = t.offset + t.extent;
      dst_extents[k] = t.extent;
      candidates[static_cast<std::size_t>(k)] = overlapping_tiles(from.space(k), lo[k], hi[k]);
    }
    kernels::dense_strides(n, dst_extents, dst_strides);
    double* out = dst.block(b);
    // Every tuple of overlapping source tiles, odometer style.
    std::vector<std::size_t> pick(static_cast<std::size_t>(n), 0);
    std::vector<tile_t> tiles(static_cast<std::size_t>(n));
    for (;;) {
      for (int k = 0; k < n; ++k)
        tiles[static_cast<std::size_t>(k)] =
            candidates[static_cast<std::size_t>(k)][pick[static_cast<std::size_t>(k)]];
      if (const std::optional<BlockRef> ref = from.locate(tiles.data())) {
        // The source block itself, then the box it shares with the destination block.
        block_extents(from, ref->slot, stored_extents);
        extent_t size = 1;
        for (int k = 0; k < n; ++k) {
          image_extents[k] = stored_extents[ref->axes[static_cast<std::size_t>(k)]];
          size *= image_extents[k];
        }
        image.resize(static_cast<std::size_t>(size));
        kernels::permute(n, stored_extents, ref->axes, ref->sign,
                         src.store().fetch(ref->slot, fetched), 0.0, image.data());
        kernels::dense_strides(n, image_extents, image_strides);
        extent_t begin[max_rank], count[max_rank], from_image = 0, into_dst = 0;
        for (int k = 0; k < n; ++k) {
          const Tile& t = from.space(k).tile(tiles[static_cast<std::size_t>(k)]);
          begin[k] = std::max(lo[k], t.offset);
          count[k] = std::min(hi[k], t.offset + t.extent) - begin[k];
          from_image += (begin[k] - t.offset) * image_strides[k];
          into_dst += (begin[k] - lo[k]) * dst_strides[k];
        }
        Axes identity{};
        for (int k = 0; k < n; ++k)
          identity[static_cast<std::size_t>(k)] = static_cast<std::int8_t>(k);
        kernels::permute_strided(n, count, image_strides, identity, 1.0, image.data() + from_image,
                                 0.0, out + into_dst, dst_strides);
      }
      int k = n - 1;
      while (k >= 0 &&
             ++pick[static_cast<std::size_t>(k)] == candidates[static_cast<std::size_t>(k)].size())
        pick[static_cast<std::size_t>(k--)] = 0;
      if (k < 0) break;
    }
  }
  dst.store().complete_writes();
}

void to_dense(const BlockTensor& t, double* dense) {
  const BlockShape& s = t.shape();
  const int n = s.rank();
  std::vector<double> image;
  extent_t extents[max_rank];
  ScratchBuffer fetched;
  for (slot_t b = 0; b < s.num_blocks(); ++b) {
    const tile_t* c = s.block_tiles(b);
    block_extents(s, b, extents);
    image.resize(static_cast<std::size_t>(s.block_size(b)));
    const double* stored = t.store().fetch(b, fetched);
    std::set<std::vector<tile_t>> written;
    for (const SymmetryElement& g : s.group().elements()) {
      // The block whose canonical block is c through g: g.tiles = c, i.e. tiles[g[k]] = c[k].
      std::vector<tile_t> tiles(static_cast<std::size_t>(n));
      for (int k = 0; k < n; ++k)
        tiles[static_cast<std::size_t>(g.perm[static_cast<std::size_t>(k)])] = c[k];
      if (!written.insert(tiles).second) continue;
      kernels::permute(n, extents, inverse(g.perm), g.sign, stored, 0.0, image.data());
      for_each_run(s, tiles.data(), [&](extent_t d, extent_t o, extent_t run) {
        std::copy_n(image.data() + o, run, dense + d);
      });
    }
  }
}

}  // namespace tilecc
