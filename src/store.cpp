#include "tilecc/store.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace tilecc {
namespace {

// Stores of at least glibc's initial mmap threshold (128 KiB) are mapped from the kernel directly,
// not taken from malloc: glibc raises its threshold to the size of any mapped block freed, after
// which a CC iteration's intermediates (allocated and freed in changing order) come from its
// heap, fragment it, and the process grows from one iteration to the next. A mapping goes back
// to the kernel when freed, and its pages arrive zeroed.
constexpr std::size_t mapped_from_bytes = std::size_t{1} << 17;

}  // namespace

void MemoryStore::Free::operator()(double* p) const {
  if (mapped_bytes > 0)
    munmap(p, mapped_bytes);
  else
    std::free(p);
}

MemoryStore::MemoryStore(const BlockShape& shape) : data_(nullptr, Free{}), shape_(&shape) {
  const auto doubles = static_cast<std::size_t>(shape.storage_doubles());
  // Offsets are padded to 64 bytes, and so is the size (aligned_alloc needs a multiple of it).
  const std::size_t bytes = (std::max<std::size_t>(doubles, 8) * sizeof(double) + 63) / 64 * 64;
  if (bytes >= mapped_from_bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = std::unique_ptr<double[], Free>(static_cast<double*>(p), Free{bytes});
    return;
  }
  void* p = std::aligned_alloc(64, bytes);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  data_ = std::unique_ptr<double[], Free>(static_cast<double*>(p), Free{0});
}

}  // namespace tilecc
