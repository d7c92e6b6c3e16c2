#include "tilecc/store.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace tilecc {

void MemoryStore::Free::operator()(double* p) const { std::free(p); }

MemoryStore::MemoryStore(const BlockShape& shape) : shape_(&shape) {
  const auto doubles = static_cast<std::size_t>(shape.storage_doubles());
  // aligned_alloc needs a size that is a multiple of the alignment; offsets are padded to it.
  const std::size_t bytes = std::max<std::size_t>(doubles, 8) * sizeof(double);
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  data_.reset(static_cast<double*>(p));
}

}  // namespace tilecc
