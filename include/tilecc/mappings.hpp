#pragma once
/** @file MappingCache: the page mappings of large stores, kept when freed for the next store of
 * the same size. */
#include <cstddef>
#include <mutex>
#include <vector>

namespace tilecc {

/**
 * Zeroed anonymous mappings, handed out by size and taken back when their store is freed.
 *
 * A CC iteration frees its intermediates when it ends and allocates the same ones, of the same
 * sizes, in the next. A fresh mapping costs a page fault per 4 KiB page on first touch (a trap, and
 * the kernel zeroing the page), in whatever first writes it: methanol/cc-pVDZ's CCSD iteration took
 * 2324 of them, and 3 once the mappings were kept. A mapping kept from the iteration before is
 * cleared by memset on pages already present, without faults.
 *
 * The cache holds freed mappings up to a limit, oldest given back first when over it, so memory a
 * calculation no longer asks for (sizes of an earlier job) returns to the kernel. Thread-safe.
 *
 * Each runtime owns one (Runtime::mappings()), shared with the stores of its tensors, which give
 * their mappings back to it when freed (a store keeps its cache alive).
 *
 * @code
 *   auto cache = std::make_shared<MappingCache>(MappingCache::default_limit_bytes());
 *   void* p = cache->take(bytes);   // zeroed, page-aligned
 *   cache->give(p, bytes);          // kept for the next take(bytes), or unmapped
 * @endcode
 */
class MappingCache {
 public:
  /** Holds at most `limit_bytes` of freed mappings. */
  explicit MappingCache(std::size_t limit_bytes) : limit_bytes_(limit_bytes) {}
  ~MappingCache();
  MappingCache(const MappingCache&) = delete;
  MappingCache& operator=(const MappingCache&) = delete;

  /** A sixteenth of the machine's memory (1 GiB where its size is unknown). */
  static std::size_t default_limit_bytes();

  /** A zeroed mapping of `bytes`: the most recently given back one of that size, cleared, or a new
   *  one. Throws OutOfMemory when the kernel refuses. */
  void* take(std::size_t bytes);
  /** Takes back a mapping of `bytes` from take(): kept, giving back the oldest ones past the
   *  limit, or unmapped when it alone is over the limit. */
  void give(void* mapping, std::size_t bytes);
  /** Unmaps every mapping held: for when the sizes freed will not be asked for again (a CC
   *  solver's iterations have ended). */
  void release();
  /** Bytes of freed mappings held. */
  std::size_t held_bytes() const;
  std::size_t limit_bytes() const { return limit_bytes_; }

 private:
  struct Held {
    void* mapping;
    std::size_t bytes;
  };
  static void unmap_all(const std::vector<Held>& mappings);
  const std::size_t limit_bytes_;
  mutable std::mutex mutex_;
  std::vector<Held> held_;  // oldest first
  std::size_t held_bytes_ = 0;
};

/** A new zeroed anonymous mapping of `bytes`; OutOfMemory when the kernel refuses. */
void* map_zeroed(std::size_t bytes);
/** Gives a mapping from map_zeroed() back to the kernel. */
void unmap(void* mapping, std::size_t bytes);

}  // namespace tilecc
