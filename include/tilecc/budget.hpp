#pragma once
/** @file MemoryBudget: the bytes a runtime's tensors may hold at once, counted as their stores
 * are made and freed. */
#include <atomic>
#include <cstdint>

namespace tilecc {

/**
 * A limit on the bytes of tensor storage alive at once (per rank, for a distributed runtime),
 * and the count against it. A store reserves its bytes when it is made and releases them when it
 * is freed; a reservation past the limit is refused with one sentence, and nothing is counted.
 * A limit of 0 counts without refusing. Thread-safe.
 *
 * @code
 *   MemoryBudget budget(8LL << 30);
 *   budget.reserve(bytes, "t2");     // InputError past 8 GiB
 *   budget.release(bytes);
 * @endcode
 */
class MemoryBudget {
 public:
  explicit MemoryBudget(std::int64_t limit_bytes = 0);
  void reserve(std::int64_t bytes, const char* what);
  void release(std::int64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }
  std::int64_t limit() const { return limit_; }
  std::int64_t used() const { return used_.load(std::memory_order_relaxed); }
  /** The most held at once. */
  std::int64_t high_water() const { return high_water_.load(std::memory_order_relaxed); }

 private:
  const std::int64_t limit_;
  std::atomic<std::int64_t> used_{0}, high_water_{0};
};

}  // namespace tilecc
