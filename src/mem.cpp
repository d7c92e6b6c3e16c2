#include "tilecc/mem.hpp"

#include <new>

namespace tilecc {

double* ScratchBuffer::get(extent_t n) {
  if (n > capacity_) {
    const auto bytes = static_cast<std::size_t>((n + 7) / 8 * 8) * sizeof(double);
    void* p = std::aligned_alloc(64, bytes);
    if (p == nullptr) throw std::bad_alloc();
    data_.reset(static_cast<double*>(p));
    capacity_ = n;
  }
  return data_.get();
}

}  // namespace tilecc
