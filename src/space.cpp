#include "tilecc/space.hpp"

#include <algorithm>
#include <numeric>

#include "tilecc/error.hpp"

namespace tilecc {
namespace {

// Sorted order: alpha, beta, then spatial orbitals.
int spin_rank(Spin s) { return s == Spin::alpha ? 0 : (s == Spin::beta ? 1 : 2); }

const char* kind_name(SpaceKind k) {
  switch (k) {
    case SpaceKind::occupied:
      return "occupied";
    case SpaceKind::virtual_:
      return "virtual";
    default:
      return "general";
  }
}

}  // namespace

IndexSpace::IndexSpace(std::vector<Orbital> orbitals, extent_t tile_size, std::string name,
                       SpaceKind kind)
    : tile_size_(tile_size), name_(std::move(name)), kind_(kind) {
  const std::string who =
      name_.empty() ? std::string("index space") : "index space '" + name_ + "'";
  TILECC_CHECK(tile_size > 0, who, ": tile size must be a positive number of orbitals, got ",
               tile_size, ".");
  TILECC_CHECK(!orbitals.empty(), who, " has no orbitals; give it at least one.");
  for (std::size_t p = 0; p < orbitals.size(); ++p) {
    const Orbital& o = orbitals[p];
    TILECC_CHECK(o.irrep >= 0 && o.irrep < 8, who, ": orbital ", p, " has irrep ", o.irrep,
                 ", but irreps of D2h and its subgroups are numbered 0 to 7.");
    const auto s = static_cast<int>(o.spin);
    TILECC_CHECK(s >= -1 && s <= 1, who, ": orbital ", p, " has spin ", s,
                 ", but spin must be alpha (+1), beta (-1) or none (0).");
  }
  order_.resize(orbitals.size());
  std::iota(order_.begin(), order_.end(), extent_t{0});
  std::stable_sort(order_.begin(), order_.end(), [&](extent_t x, extent_t y) {
    const Orbital& a = orbitals[static_cast<std::size_t>(x)];
    const Orbital& b = orbitals[static_cast<std::size_t>(y)];
    if (spin_rank(a.spin) != spin_rank(b.spin)) return spin_rank(a.spin) < spin_rank(b.spin);
    if (a.irrep != b.irrep) return a.irrep < b.irrep;
    return a.energy < b.energy;
  });
  orbitals_.reserve(orbitals.size());
  for (extent_t p : order_) orbitals_.push_back(orbitals[static_cast<std::size_t>(p)]);

  // Cut each (spin, irrep) segment into near-equal tiles.
  extent_t begin = 0;
  const extent_t n = size();
  while (begin < n) {
    extent_t end = begin + 1;
    while (end < n &&
           orbitals_[static_cast<std::size_t>(end)].spin ==
               orbitals_[static_cast<std::size_t>(begin)].spin &&
           orbitals_[static_cast<std::size_t>(end)].irrep ==
               orbitals_[static_cast<std::size_t>(begin)].irrep)
      ++end;
    const extent_t len = end - begin;
    // Rounded up without len + tile_size, which overflows for tile sizes near 2^63.
    const extent_t count = len / tile_size + (len % tile_size != 0 ? 1 : 0);
    extent_t offset = begin;
    for (extent_t t = 0; t < count; ++t) {
      const extent_t extent = len / count + (t < len % count ? 1 : 0);
      const Orbital& o = orbitals_[static_cast<std::size_t>(offset)];
      tiles_.push_back(Tile{offset, extent, o.spin, o.irrep});
      offset += extent;
    }
    begin = end;
  }
}

bool IndexSpace::operator==(const IndexSpace& other) const {
  if (this == &other) return true;
  if (tile_size_ != other.tile_size_ || kind_ != other.kind_ || size() != other.size())
    return false;
  for (std::size_t p = 0; p < orbitals_.size(); ++p) {
    const Orbital& a = orbitals_[p];
    const Orbital& b = other.orbitals_[p];
    if (a.spin != b.spin || a.irrep != b.irrep || a.energy != b.energy) return false;
  }
  return true;
}

std::string IndexSpace::describe() const {
  return detail::concat(name_.empty() ? std::string("unnamed") : "'" + name_ + "'", " (", size(),
                        " ", kind_name(kind_), " orbitals, ", num_tiles(), " tiles of ", tile_size_,
                        ")");
}

}  // namespace tilecc
