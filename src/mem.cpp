#include "tilecc/mem.hpp"

#include <cstdlib>

#include "detail/checked.hpp"
#include "tilecc/error.hpp"

namespace tilecc {

double* ScratchBuffer::get(extent_t n) {
  if (n > capacity_) {
    const auto bytes = detail::checked_product<std::size_t>(
        static_cast<std::size_t>(n / 8 + (n % 8 != 0 ? 1 : 0)) * 8, sizeof(double),
        "a worker's scratch buffer in bytes");
    void* p = std::aligned_alloc(64, bytes);
    if (p == nullptr) throw OutOfMemory(bytes, "a worker's scratch buffer");
    data_.reset(static_cast<double*>(p));
    capacity_ = n;
  }
  return data_.get();
}

}  // namespace tilecc
