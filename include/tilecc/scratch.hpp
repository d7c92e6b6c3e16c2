#pragma once
/** @file The scratch space of a runtime's disk stores: the directory their block files go in, and
 * which of their blocks are in memory, under one limit (paper 004's memory limit of a stage). */
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "tilecc/types.hpp"

namespace tilecc {

class DiskStore;

/**
 * Where disk stores keep their blocks and how many bytes of them may be resident at once. A block
 * is made resident by a fetch or write (unpinned: the least recently used go first when room is
 * needed, the LRU cache baseline) or by a stage schedule (pinned until released: the schedule
 * says when it goes). Making room never evicts a pinned block; a pinned set over the limit is
 * refused with one sentence. Thread-safe.
 *
 * @code
 *   ScratchSpace scratch("/scratch/me", false, 1LL << 30);   // 1 GiB of resident blocks
 *   // disk stores made with it register their resident blocks here
 * @endcode
 */
class ScratchSpace {
 public:
  /** `directory` empty: $TILECC_SCRATCH, else a new temporary directory (removed with the space
   *  unless `keep`). A limit of 0: no limit (nothing is ever evicted for room). */
  ScratchSpace(std::string directory, bool keep, std::int64_t resident_limit_bytes);
  ~ScratchSpace();
  ScratchSpace(const ScratchSpace&) = delete;
  ScratchSpace& operator=(const ScratchSpace&) = delete;

  /** The directory block files go in (created when the first one is). */
  const std::string& directory();
  bool keep() const { return keep_; }
  std::int64_t limit() const { return limit_; }
  /** Bytes resident now, and the most there have been at once. */
  std::int64_t resident() const;
  std::int64_t high_water() const;
  /** Bytes couriers read ahead of the tasks (admit_ahead), of all read. */
  std::int64_t read_ahead() const;

  enum class Admitted : std::uint8_t { resident, read_in, no_room };
  /** Record that a block of `store` is now resident (if it was not) and, with `pin`, pinned
   *  once more; evicts unpinned blocks for room (a pinned set over the limit is an error).
   *  read_in: it was not resident (the caller reads it in). Called by stores. */
  Admitted admit(DiskStore* store, slot_t slot, std::int64_t bytes, bool pin);
  /** For a courier reading ahead: a block not resident yet is admitted pinned if there is room
   *  (read_in), else nothing is recorded (no_room); a resident one is left as it is (resident),
   *  so that a schedule that lets it go and takes it again reads it again, as it counts. */
  Admitted admit_ahead(DiskStore* store, slot_t slot, std::int64_t bytes);
  /** Unpin a block once; with `drop` and no pins left, evict it now. */
  void unpin(DiskStore* store, slot_t slot, bool drop);
  /** Evict every unpinned block (written back if changed): memory holds only what stages hold. */
  void flush();
  /** Forget every block of a store that is going away (nothing written back). */
  void forget(DiskStore* store);

 private:
  struct Entry {
    std::int64_t bytes = 0;
    int pins = 0;
    std::list<std::pair<DiskStore*, slot_t>>::iterator lru;  // valid while unpinned
  };
  using Key = std::pair<DiskStore*, slot_t>;
  bool make_room(std::int64_t bytes);  // with the lock held; false: pinned blocks fill it
  std::map<Key, Entry>::iterator insert(DiskStore* store, slot_t slot, std::int64_t bytes);
  void evict(std::map<Key, Entry>::iterator it, bool in_lru);

  std::string directory_;
  bool made_directory_ = false;
  bool keep_;
  std::int64_t limit_;
  mutable std::mutex mutex_;
  std::map<Key, Entry> entries_;
  std::list<Key> lru_;  // unpinned resident blocks, least recently used first
  std::int64_t resident_ = 0, high_water_ = 0, read_ahead_ = 0;
};

}  // namespace tilecc
