#include "tilecc/mappings.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "tilecc/error.hpp"

namespace tilecc {

void* map_zeroed(std::size_t bytes) {
  // A new mapping's pages arrive zeroed.
  void* mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) throw OutOfMemory(bytes, "a tensor's blocks");
  return mapping;
}

void unmap(void* mapping, std::size_t bytes) { munmap(mapping, bytes); }

void MappingCache::unmap_all(const std::vector<Held>& mappings) {
  for (const Held& h : mappings) unmap(h.mapping, h.bytes);
}

MappingCache::~MappingCache() { unmap_all(held_); }

std::size_t MappingCache::default_limit_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return std::size_t{1} << 30;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_bytes) / 16;
}

void* MappingCache::take(std::size_t bytes) {
  void* mapping = nullptr;
  {
    std::lock_guard lock(mutex_);
    // The newest of that size: its pages are the likeliest to be in cache still.
    const auto found =
        std::find_if(held_.rbegin(), held_.rend(), [&](const Held& h) { return h.bytes == bytes; });
    if (found != held_.rend()) {
      mapping = found->mapping;
      held_bytes_ -= bytes;
      held_.erase(std::next(found).base());
    }
  }
  if (mapping != nullptr) {
    std::memset(mapping, 0, bytes);
    return mapping;
  }
  return map_zeroed(bytes);
}

void MappingCache::give(void* mapping, std::size_t bytes) {
  std::vector<Held> released;
  {
    std::lock_guard lock(mutex_);
    if (bytes > limit_bytes_) {
      released.push_back({mapping, bytes});
    } else {
      held_.push_back({mapping, bytes});
      held_bytes_ += bytes;
      auto kept = held_.begin();
      while (held_bytes_ > limit_bytes_) {
        released.push_back(*kept);
        held_bytes_ -= kept->bytes;
        ++kept;
      }
      held_.erase(held_.begin(), kept);
    }
  }
  // Outside the lock: unmapping a large mapping takes a while.
  unmap_all(released);
}

void MappingCache::release() {
  std::vector<Held> released;
  {
    std::lock_guard lock(mutex_);
    released.swap(held_);
    held_bytes_ = 0;
  }
  unmap_all(released);
}

std::size_t MappingCache::held_bytes() const {
  std::lock_guard lock(mutex_);
  return held_bytes_;
}

}  // namespace tilecc
