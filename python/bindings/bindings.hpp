#pragma once
// One registration function per core area; module.cpp calls them all.
#include <nanobind/nanobind.h>

namespace tilecc::python {
void bind_space(nanobind::module_& m);
void bind_tensor(nanobind::module_& m);
void bind_contract(nanobind::module_& m);
void bind_runtime(nanobind::module_& m);
void bind_triples(nanobind::module_& m);
void bind_engine(nanobind::module_& m);
}  // namespace tilecc::python
