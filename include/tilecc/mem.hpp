#pragma once
/** @file Per-worker buffers: each worker owns its scratch space, so no allocation or locking
 * happens inside tasks (paper 000's thread-local pools). */
#include <cstdlib>
#include <memory>

#include "tilecc/types.hpp"

namespace tilecc {

/** A 64-byte-aligned scratch array that grows to the largest size asked of it and never shrinks;
 * its capacity is the worker's high-water mark for that buffer. */
class ScratchBuffer {
 public:
  /** At least n doubles; contents are unspecified. */
  double* get(extent_t n);
  extent_t capacity() const { return capacity_; }

 private:
  struct Free {
    void operator()(double* p) const { std::free(p); }
  };
  std::unique_ptr<double[], Free> data_;
  extent_t capacity_ = 0;
};

/** The scratch one worker uses for one task: permuted A, permuted B, result R, and, for stores
 *  without zero-copy views, the fetched A and B blocks and the output block staged for
 *  accumulation (empty with the memory store). */
struct Workspace {
  ScratchBuffer a, b, r, fetched_a, fetched_b, staged_c;
  extent_t high_water_bytes() const {
    return static_cast<extent_t>(sizeof(double)) *
           (a.capacity() + b.capacity() + r.capacity() + fetched_a.capacity() +
            fetched_b.capacity() + staged_c.capacity());
  }
};

}  // namespace tilecc
