// tilecc._core: the private compiled module; the tilecc package re-exports what users need.
#include "bindings.hpp"

NB_MODULE(_core, m) {
  m.doc() = "tilecc's C++ core (private: use the tilecc package)";
  tilecc::python::bind_space(m);
  tilecc::python::bind_tensor(m);
  tilecc::python::bind_contract(m);
  tilecc::python::bind_runtime(m);
}
