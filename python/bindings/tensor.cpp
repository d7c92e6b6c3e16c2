// Block shapes, block tensors and the element-wise operations on them.
#include "tilecc/tensor.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "tilecc/error.hpp"
#include "tilecc/mappings.hpp"
#include "tilecc/ops.hpp"

namespace nb = nanobind;

namespace tilecc::python {
namespace {

using DenseIn = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
using DenseOut = nb::ndarray<double, nb::c_contig, nb::device::cpu>;

template <class Array>
void check_dense(const BlockShape& s, const Array& a, const char* what) {
  TILECC_CHECK(static_cast<int>(a.ndim()) == s.rank(), what, " array has ", a.ndim(),
               " dimensions but the tensor has ", s.rank(), " indices.");
  for (int k = 0; k < s.rank(); ++k)
    TILECC_CHECK(static_cast<extent_t>(a.shape(static_cast<std::size_t>(k))) == s.space(k).size(),
                 what, " array has extent ", a.shape(static_cast<std::size_t>(k)), " on axis ", k,
                 " but space ", s.space(k).describe(), " has ", s.space(k).size(), " orbitals.");
}

}  // namespace

void bind_tensor(nb::module_& m) {
  nb::class_<MappingCache>(m, "MappingCache")
      .def("release", &MappingCache::release,
           "Unmap every freed mapping held (the sizes will not be asked for again).")
      .def_prop_ro("held_bytes", &MappingCache::held_bytes)
      .def_prop_ro("limit_bytes", &MappingCache::limit_bytes);
  m.def(
      "copy_retiled",
      [](const BlockTensor& src, BlockTensor& dst) {
        nb::gil_scoped_release release;
        copy_retiled(src, dst);
      },
      nb::arg("src"), nb::arg("dst"));
  nb::class_<BlockShape>(m, "BlockShape")
      .def(
          "__init__",
          [](BlockShape* self, std::vector<SpacePtr> spaces, PermutationGroup group,
             std::vector<int> spin_sides, int irrep, const std::string& index) {
            const BlockShape::Index kind = index == "dense"    ? BlockShape::Index::dense
                                           : index == "sparse" ? BlockShape::Index::sparse
                                                               : BlockShape::Index::automatic;
            TILECC_CHECK(index == "dense" || index == "sparse" || index == "automatic",
                         "unknown block index '", index, "'; choose automatic, dense or sparse.");
            new (self)
                BlockShape(std::move(spaces), std::move(group), std::move(spin_sides), irrep, kind);
          },
          nb::arg("spaces"), nb::arg("group"), nb::arg("spin_sides"), nb::arg("irrep"),
          nb::arg("index") = "automatic")
      .def_prop_ro("sparse_index", &BlockShape::sparse_index)
      .def_prop_ro("rank", &BlockShape::rank)
      .def_prop_ro("spaces", &BlockShape::spaces)
      .def_prop_ro("group", &BlockShape::group)
      .def_prop_ro("spin_sides", &BlockShape::spin_sides)
      .def_prop_ro("irrep", &BlockShape::irrep)
      .def_prop_ro("num_blocks", &BlockShape::num_blocks)
      .def_prop_ro("stored_elements", &BlockShape::stored_elements)
      .def_prop_ro("nonzero_elements", &BlockShape::nonzero_elements)
      .def_prop_ro("dense_elements", &BlockShape::dense_elements)
      .def("block_tiles",
           [](const BlockShape& s, slot_t b) {
             TILECC_CHECK(b >= 0 && b < s.num_blocks(), "block ", b,
                          " does not exist; the tensor has ", s.num_blocks(), " stored blocks.");
             return std::vector<tile_t>(s.block_tiles(b), s.block_tiles(b) + s.rank());
           })
      .def("orbit_size", &BlockShape::orbit_size)
      .def("allowed",
           [](const BlockShape& s, const std::vector<tile_t>& tiles) {
             TILECC_CHECK(static_cast<int>(tiles.size()) == s.rank(), "give one tile per index.");
             for (int k = 0; k < s.rank(); ++k)
               TILECC_CHECK(tiles[static_cast<std::size_t>(k)] >= 0 &&
                                tiles[static_cast<std::size_t>(k)] < s.space(k).num_tiles(),
                            "tile ", tiles[static_cast<std::size_t>(k)], " of index ", k,
                            " is out of range.");
             return s.allowed(tiles.data());
           })
      .def("equals", [](const BlockShape& a, const BlockShape& b) { return a == b; })
      .def("describe", &BlockShape::describe);

  m.def("store_names", &store_names);
  nb::class_<BlockTensor>(m, "BlockTensor")
      .def(
          "__init__",
          [](BlockTensor* self, ShapePtr shape, const std::string& store) {
            new (self) BlockTensor(std::move(shape), store);
          },
          nb::arg("shape"), nb::arg("store") = "memory",
          "A zeroed tensor outside any runtime (Runtime.tensor makes a runtime's).")
      .def(
          "owns", [](const BlockTensor& t, slot_t s) { return t.store().owns(s); }, nb::arg("slot"),
          "Whether this rank holds the block (and computes it).")
      .def("complete_writes", [](BlockTensor& t) { t.store().complete_writes(); })
      .def_prop_ro(
          "owners", [](const BlockTensor& t) { return t.store().owners(); },
          "The rank each stored block lives on, by slot (empty in one process).")
      .def(
          "redistribute",
          [](BlockTensor& t, const std::vector<int>& owners) { t.redistribute(owners); },
          nb::arg("owners"), "Move the blocks to these owner ranks, by slot (collective).")
      .def_prop_ro("store_kind", [](const BlockTensor& t) { return std::string(t.store().kind()); })
      .def("transfers", [](const BlockTensor& t) { return transfer_dict(t.store().transfers()); })
      .def("reset_transfers", [](BlockTensor& t) { t.store().transfers().reset(); })
      .def_prop_ro("shape", &BlockTensor::shape_ptr)
      .def("zero", &BlockTensor::zero)
      .def(
          "fill", [](BlockTensor& t, double v) { fill(t, v); }, nb::arg("value"))
      .def(
          "fill_random", [](BlockTensor& t, std::uint64_t seed) { fill_random(t, seed); },
          nb::arg("seed"))
      .def(
          "scale", [](BlockTensor& t, double a) { scale(t, a); }, nb::arg("alpha"))
      .def("symmetrize", [](BlockTensor& t) { symmetrize(t); })
      .def(
          "divide_by_denominators",
          [](BlockTensor& t, const std::vector<int>& signs, double shift) {
            divide_by_denominators(t, signs, shift);
          },
          nb::arg("signs"), nb::arg("shift") = 0.0)
      .def(
          "from_dense",
          [](BlockTensor& t, DenseIn a) {
            check_dense(t.shape(), a, "the dense");
            from_dense(t, a.data());
          },
          nb::arg("array"))
      .def(
          "to_dense",
          [](const BlockTensor& t, DenseOut out) {
            check_dense(t.shape(), out, "the output");
            std::fill_n(out.data(), t.shape().dense_elements(), 0.0);
            to_dense(t, out.data());
          },
          nb::arg("out"))
      .def(
          "pack",
          [](const BlockTensor& t, DenseOut out) {
            TILECC_CHECK(out.ndim() == 1 &&
                             static_cast<extent_t>(out.shape(0)) == t.shape().stored_elements(),
                         "pack needs a 1-D array of ", t.shape().stored_elements(), " doubles.");
            pack(t, out.data());
          },
          nb::arg("out"))
      .def(
          "unpack",
          [](BlockTensor& t, DenseIn in) {
            TILECC_CHECK(
                in.ndim() == 1 && static_cast<extent_t>(in.shape(0)) == t.shape().stored_elements(),
                "unpack needs a 1-D array of ", t.shape().stored_elements(), " doubles, got ",
                in.ndim() == 1 ? static_cast<extent_t>(in.shape(0)) : -1, ".");
            unpack(t, in.data());
          },
          nb::arg("values"))
      .def(
          "write_block",
          [](BlockTensor& t, slot_t b, DenseIn values) {
            const BlockShape& s = t.shape();
            TILECC_CHECK(b >= 0 && b < s.num_blocks(), "block ", b,
                         " does not exist; the tensor has ", s.num_blocks(), " stored blocks.");
            TILECC_CHECK(static_cast<extent_t>(values.size()) == s.block_size(b), "block ", b,
                         " holds ", s.block_size(b), " values, got ", values.size(), ".");
            t.store().write(b, values.data());
          },
          nb::arg("slot"), nb::arg("values"),
          "Write a whole block through the store, to whichever rank owns it (complete_writes() "
          "makes the writes visible everywhere).")
      .def(
          "block",
          [](BlockTensor& t, slot_t b) {
            const BlockShape& s = t.shape();
            TILECC_CHECK(b >= 0 && b < s.num_blocks(), "block ", b,
                         " does not exist; the tensor has ", s.num_blocks(), " stored blocks.");
            std::vector<std::size_t> shape;
            for (int k = 0; k < s.rank(); ++k)
              shape.push_back(static_cast<std::size_t>(s.block_extent(b, k)));
            return nb::ndarray<nb::numpy, double>(t.block(b), shape.size(), shape.data(),
                                                  nb::handle());
          },
          nb::arg("slot"), nb::rv_policy::reference_internal);
}

}  // namespace tilecc::python
