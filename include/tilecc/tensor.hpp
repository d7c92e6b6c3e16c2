#pragma once
/** @file BlockTensor: spaces + shape + a store holding the canonical blocks only. */
#include <memory>
#include <string>

#include "tilecc/shape.hpp"
#include "tilecc/store.hpp"

namespace tilecc {

/**
 * A block-sparse tensor with permutational, spin and point-group symmetry. Only canonical
 * non-zero blocks are stored (see BlockShape); every other block is read through
 * BlockShape::locate. Tensors of the same shape share one BlockShape, which lets plans made for
 * one be executed on the others.
 *
 * @code
 *   BlockTensor t2(std::make_shared<BlockShape>(spaces, group));   // zero-initialised
 *   double* b = t2.block(0);
 * @endcode
 */
class BlockTensor {
 public:
  /** A zeroed tensor whose blocks live in the named store (see make_store), with a runtime's
   *  resources (its mapping cache, its communicator) when given. */
  explicit BlockTensor(ShapePtr shape, const std::string& store = "memory",
                       const StoreResources& resources = {});

  const BlockShape& shape() const { return *shape_; }
  const ShapePtr& shape_ptr() const { return shape_; }
  int rank() const { return shape_->rank(); }

  double* block(slot_t s) { return store_->block(s); }
  const double* block(slot_t s) const { return store_->block(s); }
  const BlockStore& store() const { return *store_; }
  BlockStore& store() { return *store_; }

  /** Set every element to zero. */
  void zero();
  /** Moves the blocks to the owner ranks given by slot (collective; see
   *  BlockStore::redistributed). Refused, in one sentence, for a store of one process. */
  void redistribute(std::span<const int> owners);

 private:
  ShapePtr shape_;
  std::unique_ptr<BlockStore> store_;
};

}  // namespace tilecc
