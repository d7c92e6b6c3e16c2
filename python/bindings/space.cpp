// Index spaces and symmetry groups.
#include "tilecc/space.hpp"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "tilecc/error.hpp"
#include "tilecc/symmetry.hpp"

namespace nb = nanobind;

namespace tilecc::python {

void bind_space(nb::module_& m) {
  nb::enum_<SpaceKind>(m, "SpaceKind")
      .value("general", SpaceKind::general)
      .value("occupied", SpaceKind::occupied)
      .value("virtual", SpaceKind::virtual_);

  nb::class_<IndexSpace>(m, "IndexSpace")
      .def(
          "__init__",
          [](IndexSpace* self, const std::vector<int>& spins, const std::vector<int>& irreps,
             const std::vector<double>& energies, extent_t tile, const std::string& name,
             SpaceKind kind) {
            TILECC_CHECK(irreps.size() == spins.size() && energies.size() == spins.size(),
                         "an index space needs one spin, irrep and energy per orbital; got ",
                         spins.size(), " spins, ", irreps.size(), " irreps and ", energies.size(),
                         " energies.");
            std::vector<Orbital> orbitals(spins.size());
            for (std::size_t p = 0; p < spins.size(); ++p) {
              orbitals[p].spin = static_cast<Spin>(spins[p] > 1 || spins[p] < -1 ? 2 : spins[p]);
              orbitals[p].irrep = irreps[p];
              orbitals[p].energy = energies[p];
            }
            new (self) IndexSpace(std::move(orbitals), tile, name, kind);
          },
          nb::arg("spins"), nb::arg("irreps"), nb::arg("energies"), nb::arg("tile"),
          nb::arg("name"), nb::arg("kind"))
      .def_prop_ro("size", &IndexSpace::size)
      .def_prop_ro("num_tiles", &IndexSpace::num_tiles)
      .def_prop_ro("tile_size", &IndexSpace::tile_size)
      .def_prop_ro("name", &IndexSpace::name)
      .def_prop_ro("kind", &IndexSpace::kind)
      .def_prop_ro("order", &IndexSpace::order)
      .def_prop_ro("tiles",
                   [](const IndexSpace& s) {
                     std::vector<std::pair<extent_t, extent_t>> t;
                     for (const Tile& x : s.tiles()) t.emplace_back(x.offset, x.extent);
                     return t;
                   })
      .def_prop_ro("tile_spins",
                   [](const IndexSpace& s) {
                     std::vector<int> v;
                     for (const Tile& x : s.tiles()) v.push_back(static_cast<int>(x.spin));
                     return v;
                   })
      .def_prop_ro("tile_irreps",
                   [](const IndexSpace& s) {
                     std::vector<int> v;
                     for (const Tile& x : s.tiles()) v.push_back(x.irrep);
                     return v;
                   })
      .def_prop_ro("spins",
                   [](const IndexSpace& s) {
                     std::vector<int> v;
                     for (const Orbital& o : s.orbitals()) v.push_back(static_cast<int>(o.spin));
                     return v;
                   })
      .def_prop_ro("irreps",
                   [](const IndexSpace& s) {
                     std::vector<int> v;
                     for (const Orbital& o : s.orbitals()) v.push_back(o.irrep);
                     return v;
                   })
      .def_prop_ro("energies",
                   [](const IndexSpace& s) {
                     std::vector<double> v;
                     for (const Orbital& o : s.orbitals()) v.push_back(o.energy);
                     return v;
                   })
      .def("equals", [](const IndexSpace& a, const IndexSpace& b) { return a == b; })
      .def("describe", &IndexSpace::describe);

  nb::class_<PermutationGroup>(m, "PermutationGroup")
      .def(
          "__init__",
          [](PermutationGroup* self, int rank,
             const std::vector<std::pair<std::vector<int>, int>>& gens) {
            std::vector<SymmetryElement> g;
            for (const auto& [perm, sign] : gens) g.push_back({perm, sign});
            new (self) PermutationGroup(rank, std::move(g));
          },
          nb::arg("rank"), nb::arg("generators"))
      .def_prop_ro("rank", &PermutationGroup::rank)
      .def_prop_ro("order", &PermutationGroup::order)
      .def_prop_ro("elements",
                   [](const PermutationGroup& g) {
                     std::vector<std::pair<std::vector<int>, int>> e;
                     for (const SymmetryElement& x : g.elements()) e.emplace_back(x.perm, x.sign);
                     return e;
                   })
      .def_prop_ro("generators", [](const PermutationGroup& g) {
        std::vector<std::pair<std::vector<int>, int>> e;
        for (const SymmetryElement& x : g.generators()) e.emplace_back(x.perm, x.sign);
        return e;
      });
}

}  // namespace tilecc::python
