#pragma once
/** @file Q2 of WorkQ (paper 003): updates of blocks that other ranks own, which workers leave for
 * their rank's courier to send, so that a worker goes on to its next task instead of waiting for
 * the network. */
#include <cstdint>
#include <vector>

#include "tilecc/types.hpp"

namespace tilecc {

class BlockStore;

/** An update a worker posted: `values` to add into block `slot` of `store`, copied out of the
 *  worker's buffer, with `reserved` bytes of the memory budget held for them until sent. */
struct PostedUpdate {
  BlockStore* store = nullptr;
  slot_t slot = 0;
  std::vector<double> values;
  std::int64_t reserved = 0;
};

/** Where a store leaves updates for a courier (run_workq's queue is one). */
class Outbox {
 public:
  /** Takes the update, or refuses it (false) when the outbox is full: the worker then sends it
   *  itself. */
  virtual bool post(PostedUpdate&& update) = 0;

 protected:
  ~Outbox() = default;
};

}  // namespace tilecc
