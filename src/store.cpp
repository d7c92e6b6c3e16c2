#include "tilecc/store.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "detail/checked.hpp"
#include "tilecc/error.hpp"
#include "tilecc/mappings.hpp"

namespace tilecc {
namespace {

// Stores of at least glibc's initial mmap threshold (128 KiB) are mapped from the kernel directly,
// not taken from malloc: glibc raises its threshold to the size of any mapped block freed, after
// which a CC iteration's intermediates (allocated and freed in changing order) come from its
// heap, fragment it, and the process grows from one iteration to the next. Freed mappings go to
// the MappingCache, whence the next iteration's intermediates of the same sizes take them.
constexpr std::size_t mapped_from_bytes = std::size_t{1} << 17;

}  // namespace

void MemoryStore::Free::operator()(double* p) const {
  if (mapped_bytes > 0)
    MappingCache::instance().give(p, mapped_bytes);
  else
    std::free(p);
}

MemoryStore::MemoryStore(const BlockShape& shape) : data_(nullptr, Free{}), shape_(&shape) {
  const auto doubles = static_cast<std::size_t>(shape.storage_doubles());
  // Offsets are padded to 64 bytes, and so is the size (aligned_alloc needs a multiple of it).
  const std::size_t bytes =
      detail::checked_sum<std::size_t>(
          detail::checked_product<std::size_t>(std::max<std::size_t>(doubles, 8), sizeof(double),
                                               "a tensor's storage in bytes"),
          63, "a tensor's storage in bytes") /
      64 * 64;
  if (bytes >= mapped_from_bytes) {
    void* p = MappingCache::instance().take(bytes);
    data_ = std::unique_ptr<double[], Free>(static_cast<double*>(p), Free{bytes});
    return;
  }
  void* p = std::aligned_alloc(64, bytes);
  if (p == nullptr) throw OutOfMemory(bytes, "a tensor's blocks");
  std::memset(p, 0, bytes);
  data_ = std::unique_ptr<double[], Free>(static_cast<double*>(p), Free{0});
}

}  // namespace tilecc
