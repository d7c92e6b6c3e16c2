#pragma once
/** @file The disk store: a tensor's blocks in a scratch file, resident in memory only while a
 * schedule (or the LRU cache) holds them. */
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "tilecc/scratch.hpp"
#include "tilecc/store.hpp"

namespace tilecc {

/**
 * Blocks in one file of the runtime's scratch directory, its space reserved when the store is
 * made (so a full disk is refused then, not found mid-run) and the file removed with the store.
 * The file is mapped into the process: a resident block is a view (tasks and element-wise
 * operations work on it in place, as on the memory store), and which blocks are resident is the
 * scratch space's to decide. A block becoming resident is read from the file (counted as a disk
 * read of its bytes), and a changed block leaving is written back (a disk write) and its pages
 * dropped from memory.
 *
 * stage() pins blocks resident until release(): what a stage schedule does; any other access makes
 * a block resident unpinned, to be evicted least recently used first when room is needed.
 */
class DiskStore final : public BlockStore {
 public:
  DiskStore(const BlockShape& shape, const StoreResources& resources);
  ~DiskStore() override;

  const double* fetch(slot_t slot, ScratchBuffer& buffer) const override;
  double* writable(slot_t slot) override;
  void accumulate(slot_t slot, const double* values) override;
  void write(slot_t slot, const double* values) override;
  bool zero_copy() const override { return true; }
  double* block(slot_t slot) override;
  const double* block(slot_t slot) const override;
  const char* kind() const override { return "disk"; }
  void stage(std::span<const slot_t> slots) const override;
  Ahead stage_ahead(slot_t slot) const override;
  void release(std::span<const slot_t> slots, bool cache = false) const override;

  /** Called by the scratch space when it evicts a block: written back if changed, its pages
   *  dropped. */
  void drop(slot_t slot) const;
  const std::string& path() const { return path_; }

 private:
  /** The block, resident (read in if it was not), marked changed when `changing`. */
  double* resident(slot_t slot, bool changing, bool pin) const;
  /** Count a block's read and bring its pages into memory. */
  void read_in(slot_t slot) const;
  double* at(slot_t slot) const { return data_ + offsets_[static_cast<std::size_t>(slot)]; }

  std::shared_ptr<ScratchSpace> scratch_;
  std::vector<extent_t> offsets_;  // per slot, then the total, in doubles
  std::string path_;
  int fd_ = -1;
  double* data_ = nullptr;
  std::size_t mapped_bytes_ = 0;
  mutable std::unique_ptr<std::atomic<bool>[]> changed_;
  // Per block, how many stages hold it: a held block is resident, so tasks reach it without the
  // scratch space's lock (stages change only between executor runs).
  mutable std::unique_ptr<std::atomic<int>[]> held_;
};

}  // namespace tilecc
