#include "tilecc/tensor.hpp"

#include <algorithm>

#include "tilecc/error.hpp"

namespace tilecc {

BlockTensor::BlockTensor(ShapePtr shape, const std::string& store, const StoreResources& resources)
    : shape_(std::move(shape)) {
  TILECC_CHECK(shape_ != nullptr, "a tensor needs a shape.");
  store_ = make_store(store, *shape_, resources);
}

void BlockTensor::redistribute(std::span<const int> owners) {
  store_->complete_writes();
  std::unique_ptr<BlockStore> next = store_->redistributed(owners);
  TILECC_CHECK(next != nullptr, "the '", store_->kind(),
               "' store keeps a tensor in one process, so its blocks have no owner ranks to "
               "change; redistribute tensors of the 'mpi' store.");
  store_ = std::move(next);
}

void BlockTensor::zero() {
  for (slot_t s = 0; s < shape_->num_blocks(); ++s)
    if (store_->owns(s)) std::fill_n(block(s), shape_->block_size(s), 0.0);
  store_->complete_writes();
}

}  // namespace tilecc
