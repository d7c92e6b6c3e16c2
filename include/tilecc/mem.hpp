#pragma once
/** @file Per-worker buffers: each worker owns its scratch space, so no allocation or locking
 * happens inside tasks once they are warm (paper 000's thread-local pools). No block is freed by
 * a thread other than the one that allocated it: tensors' blocks live in their stores, which the
 * calling thread makes and frees, so no recycle buffer between threads is needed. */
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "tilecc/types.hpp"

namespace tilecc {

/** How scratch is allocated. `pooled` (the default): each worker keeps its buffers between tasks
 *  and grows them to the largest request, so tasks allocate nothing once warm (paper 000's
 *  thread-local pools; a worker touches its buffers first, so they land on its NUMA node).
 *  `per_task`: a fresh allocation on every request, freed at the next one, so that the process's
 *  allocator (the system's, or one preloaded such as mimalloc) does the pooling: what
 *  benchmarks/memory compares pools against. Set by $TILECC_SCRATCH_ALLOCATION (`pooled` or
 * `per-task`). */
enum class ScratchMode { pooled, per_task };
ScratchMode scratch_mode_from_environment();

/** A 64-byte-aligned scratch array of at least the size last asked of it; pooled, it grows to
 *  the largest size asked and never shrinks. Counts its allocations and its largest size. */
class ScratchBuffer {
 public:
  explicit ScratchBuffer(ScratchMode mode = ScratchMode::pooled) : mode_(mode) {}
  /** At least n doubles; contents are unspecified. */
  double* get(extent_t n);
  extent_t capacity() const { return capacity_; }
  extent_t high_water() const { return high_water_; }
  std::int64_t allocations() const { return allocations_; }
  /** Allocations given back (each replaced by a larger, or per task by the next). */
  std::int64_t frees() const { return frees_; }

 private:
  struct Free {
    void operator()(double* p) const { std::free(p); }
  };
  ScratchMode mode_;
  std::unique_ptr<double[], Free> data_;
  extent_t capacity_ = 0, high_water_ = 0;
  std::int64_t allocations_ = 0, frees_ = 0;
};

/** The scratch one worker uses for one task: permuted A, permuted B, result R, and, for stores
 *  without zero-copy views, the fetched A and B blocks and the output block staged for
 *  accumulation (empty with the memory store). */
struct Workspace {
  explicit Workspace(ScratchMode mode = ScratchMode::pooled)
      : a(mode), b(mode), r(mode), fetched_a(mode), fetched_b(mode), staged_c(mode) {}
  ScratchBuffer a, b, r, fetched_a, fetched_b, staged_c;
  /** The most its buffers have held at once, if each held its largest at the same time. */
  extent_t high_water_bytes() const {
    return static_cast<extent_t>(sizeof(double)) *
           (a.high_water() + b.high_water() + r.high_water() + fetched_a.high_water() +
            fetched_b.high_water() + staged_c.high_water());
  }
  std::int64_t allocations() const {
    return a.allocations() + b.allocations() + r.allocations() + fetched_a.allocations() +
           fetched_b.allocations() + staged_c.allocations();
  }
  std::int64_t frees() const {
    return a.frees() + b.frees() + r.frees() + fetched_a.frees() + fetched_b.frees() +
           staged_c.frees();
  }
};

}  // namespace tilecc
