#pragma once
/** @file BlockStore: where the canonical blocks of a tensor live. */
#include <memory>

#include "tilecc/shape.hpp"

namespace tilecc {

/**
 * Where blocks live, behind one interface. The memory store is the embedded default; the disk
 * (out-of-core) and MPI (distributed) stores implement the same interface.
 *
 * A block is a dense row-major array with the extents of its tiles, index order as in the shape.
 */
class BlockStore {
 public:
  virtual ~BlockStore() = default;
  /** The block's elements, valid while the store lives. */
  virtual double* block(slot_t slot) = 0;
  virtual const double* block(slot_t slot) const = 0;
  /** Name for `info` and error messages ("memory", ...). */
  virtual const char* kind() const = 0;
};

/**
 * All blocks in one 64-byte-aligned allocation, at the offsets the shape assigns. The shape must
 * outlive the store (BlockTensor guarantees it).
 *
 * @code
 *   MemoryStore store(shape);           // zero-initialised
 *   double* b = store.block(0);
 * @endcode
 */
class MemoryStore final : public BlockStore {
 public:
  explicit MemoryStore(const BlockShape& shape);
  double* block(slot_t slot) override { return data_.get() + shape_->block_offset(slot); }
  const double* block(slot_t slot) const override {
    return data_.get() + shape_->block_offset(slot);
  }
  const char* kind() const override { return "memory"; }

 private:
  struct Free {
    std::size_t mapped_bytes = 0;  ///< size of the mapping, or 0 for a malloc'ed store
    void operator()(double* p) const;
  };
  std::unique_ptr<double[], Free> data_;
  const BlockShape* shape_;  // owned by the tensor, which outlives its store
};

}  // namespace tilecc
