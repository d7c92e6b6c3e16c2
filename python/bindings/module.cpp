// tilecc._core: the private compiled module; the tilecc package re-exports what users need.
#include "bindings.hpp"

NB_MODULE(_core, m) {
  m.doc() = "tilecc's C++ core (private: use the tilecc package)";
  // The default context and its plan cache live until interpreter exit by design; nanobind would
  // report them as leaks.
  nanobind::set_leak_warnings(false);
  tilecc::python::bind_space(m);
  tilecc::python::bind_tensor(m);
  // The runtime first: plans take its CostModel as a default argument.
  tilecc::python::bind_runtime(m);
  tilecc::python::bind_contract(m);
  tilecc::python::bind_triples(m);
  tilecc::python::bind_engine(m);
}
