#include "tilecc/symmetry.hpp"

#include <algorithm>
#include <deque>
#include <numeric>

#include "tilecc/error.hpp"

namespace tilecc {

SymmetryElement PermutationGroup::compose(const SymmetryElement& first,
                                          const SymmetryElement& second) {
  SymmetryElement c;
  c.perm.resize(first.perm.size());
  for (std::size_t k = 0; k < c.perm.size(); ++k)
    c.perm[k] = first.perm[static_cast<std::size_t>(second.perm[k])];
  c.sign = first.sign * second.sign;
  return c;
}

std::string PermutationGroup::describe(const SymmetryElement& g) {
  return detail::concat("(", detail::join(g.perm, ","), g.sign > 0 ? ") +1" : ") -1");
}

PermutationGroup::PermutationGroup(int rank, std::vector<SymmetryElement> generators)
    : rank_(rank), generators_(std::move(generators)) {
  TILECC_CHECK(rank >= 0 && rank <= max_rank, "tensors have 0 to ", max_rank, " indices, got rank ",
               rank, ".");
  for (const SymmetryElement& g : generators_) {
    TILECC_CHECK(static_cast<int>(g.perm.size()) == rank, "symmetry generator ", describe(g),
                 " has ", g.perm.size(), " entries but the tensor has ", rank, " indices.");
    std::vector<int> sorted = g.perm;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> expected(static_cast<std::size_t>(rank));
    std::iota(expected.begin(), expected.end(), 0);
    TILECC_CHECK(sorted == expected, "symmetry generator ", describe(g),
                 " is not a permutation of 0..", rank - 1, ".");
    TILECC_CHECK(g.sign == 1 || g.sign == -1, "symmetry generator ", describe(g),
                 " must have sign +1 or -1.");
  }
  SymmetryElement identity;
  identity.perm.resize(static_cast<std::size_t>(rank));
  std::iota(identity.perm.begin(), identity.perm.end(), 0);
  elements_.push_back(identity);
  // Breadth-first closure: multiply every known element by every generator until nothing new.
  std::deque<SymmetryElement> frontier(elements_.begin(), elements_.end());
  while (!frontier.empty()) {
    const SymmetryElement e = frontier.front();
    frontier.pop_front();
    for (const SymmetryElement& g : generators_) {
      SymmetryElement c = compose(e, g);
      auto same_perm = std::find_if(elements_.begin(), elements_.end(),
                                    [&](const SymmetryElement& x) { return x.perm == c.perm; });
      if (same_perm != elements_.end()) {
        TILECC_CHECK(same_perm->sign == c.sign,
                     "the symmetry generators are inconsistent: they make ", describe(c),
                     " both +1 and -1, so the tensor would be identically zero;"
                     " drop one of the conflicting generators.");
        continue;
      }
      elements_.push_back(c);
      frontier.push_back(std::move(c));
    }
  }
}

}  // namespace tilecc
