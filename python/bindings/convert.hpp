#pragma once
// Conversions the binding files share: operands from Python tuples, vectors handed to NumPy,
// phase times and run statistics as Python values.
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>
#include <vector>

#include "tilecc/exec.hpp"
#include "tilecc/plan.hpp"
#include "tilecc/store.hpp"
#include "tilecc/trace.hpp"

namespace tilecc::python {

namespace nb = nanobind;

using OperandTuple = std::tuple<ShapePtr, LabelList, std::string>;
inline Operand operand(const OperandTuple& t) {
  return {std::get<0>(t), std::get<1>(t), std::get<2>(t)};
}

// A vector handed to NumPy without a copy: the array owns it.
template <class T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> to_numpy(std::vector<T>&& v) {
  auto* owned = new std::vector<T>(std::move(v));
  nb::capsule free(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), {owned->size()}, free);
}

inline nb::dict phase_dict(const PhaseSeconds& seconds) {
  nb::dict phases;
  for (int p = 0; p < num_phases; ++p)
    phases[phase_name(static_cast<Phase>(p))] = seconds[static_cast<std::size_t>(p)];
  return phases;
}

/** {class name: (bytes, calls)} of a transfer counter. */
inline nb::dict transfer_dict(const TransferCounter& counter) {
  const TransferCounter::Totals totals = counter.totals();
  nb::dict out;
  for (int k = 0; k < num_transfers; ++k) {
    const auto i = static_cast<std::size_t>(k);
    out[transfer_name(static_cast<Transfer>(k))] = nb::make_tuple(totals.bytes[i], totals.calls[i]);
  }
  return out;
}

}  // namespace tilecc::python
