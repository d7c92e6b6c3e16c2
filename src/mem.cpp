#include "tilecc/mem.hpp"

#include <cstdlib>

#include "tilecc/error.hpp"

namespace tilecc {

double* ScratchBuffer::get(extent_t n) {
  if (n > capacity_) {
    const auto bytes = static_cast<std::size_t>((n + 7) / 8 * 8) * sizeof(double);
    void* p = std::aligned_alloc(64, bytes);
    if (p == nullptr) throw OutOfMemory(bytes, "a worker's scratch buffer");
    data_.reset(static_cast<double*>(p));
    capacity_ = n;
  }
  return data_.get();
}

}  // namespace tilecc
