#pragma once
/** @file The distributed block store: each canonical block lives on one owner rank, in an MPI-3
 * window; tasks read blocks with one-sided gets and add their results with one-sided
 * accumulates (passive target), as the TCE does on Global Arrays. */
#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tilecc/comm.hpp"
#include "tilecc/store.hpp"

namespace tilecc {

/** The owner rank of each of `blocks` canonical blocks: a hash of its slot, which spreads the
 *  blocks of every size over the ranks whatever the tensor's structure. */
std::vector<int> hash_placement(slot_t blocks, int ranks);

/**
 * Blocks owned by ranks (hash_placement, or an owner map given: a processor grid's, a
 * placement's), each rank's in its part of one window allocated by MPI.
 *
 *  - fetch(): the rank's own block is a zero-copy view (counted as one); another rank's is
 *    MPI_Get into the worker's buffer, counted as intra-node or inter-node by the owner's node.
 *  - writable() is always null: every result is MPI_Accumulate'd (MPI_SUM) into its owner, also a
 *    rank's own blocks, since other ranks may add to the same block at the same time and
 *    accumulates are atomic per element.
 *  - prefetch(): gets remote blocks into this rank's cache (issued together, completed together:
 *    WorkQ's courier, paper 003), where fetch() then finds them, until release()d. A block that
 *    is being prefetched is waited for rather than fetched twice. The cache counts against the
 *    memory budget: a block it has no room for is left for the task to fetch itself.
 *  - keep_fetched(): while on, fetch() gets a remote block into the same cache, so that the
 *    rank's other tasks find it there: each remote block is moved once per contraction on a
 *    rank, the least that the placement's traffic model counts.
 *  - post_updates_to(): WorkQ's Q2; accumulates of remote blocks are copied into an outbox (under
 *    the memory budget) and send_posted() by the courier, all issued, then completed together.
 *  - complete_writes(): every rank's accumulates are done, and visible to every reader.
 *  - owns() / block(): a rank's own blocks, for element-wise operations (owner computes).
 *  - redistributed(): the same blocks on other owners, each rank getting its new blocks from
 *    their old owners (counted as reads of this store).
 *
 * Making one is collective (every rank makes the same tensors in the same order); freeing one is
 * local: the window is retired to the communicator, which frees it once every rank has
 * (Communicator::free_retired, at the next complete_writes()).
 */
class MpiStore final : public BlockStore {
 public:
  /** `owners` by slot (every rank gives the same); empty: hash_placement. */
  MpiStore(const BlockShape& shape, std::shared_ptr<Communicator> comm,
           const StoreResources& resources = {}, std::vector<int> owners = {});
  ~MpiStore() override;

  const double* fetch(slot_t slot, ScratchBuffer& buffer) const override;
  double* writable(slot_t) override { return nullptr; }
  void prefetch(std::span<const slot_t> slots) const override;
  void keep_fetched(bool on) const override;
  void release(std::span<const slot_t> slots, bool cache = false) const override;
  void post_updates_to(Outbox* outbox) override { outbox_.store(outbox); }
  void send_posted(std::span<PostedUpdate> updates) override;
  void accumulate(slot_t slot, const double* values) override;
  void write(slot_t slot, const double* values) override;
  bool zero_copy() const override { return false; }
  bool owns(slot_t slot) const override { return owner(slot) == comm_->rank(); }
  void complete_writes() override;
  std::vector<int> owners() const override { return owner_; }
  std::unique_ptr<BlockStore> redistributed(std::span<const int> owners) const override;
  double* block(slot_t slot) override;
  const double* block(slot_t slot) const override;
  const char* kind() const override { return "mpi"; }

  int owner(slot_t slot) const { return owner_[static_cast<std::size_t>(slot)]; }
  const Communicator& communicator() const { return *comm_; }
  const std::shared_ptr<Communicator>& communicator_ptr() const { return comm_; }

 private:
  /** values into the owner's block, element by element with `op` (atomic per element). */
  void update(slot_t slot, const double* values, MPI_Op op);
  /** Leaves the update of a remote block in the outbox, if one is set, the budget has room for
   *  the copy and the outbox takes it; whether it did. */
  bool post(slot_t slot, const double* values);
  /** The class of a transfer between this rank and the block's owner. */
  Transfer transfer_to(slot_t slot, Transfer local) const;
  /** A prefetched (or kept) block: its values, once `ready`, and the budget bytes it holds. */
  struct Cached {
    std::vector<double> values;
    bool ready = false;
    std::int64_t reserved = 0;
  };
  /** A cache entry for a remote block not in the cache, its budget bytes reserved; null when the
   *  budget has no room (with the cache's lock held). */
  Cached* make_entry(slot_t slot) const;
  /** Gets into `out` from the owner (its counting and the emulated network's delay the
   *  caller's). */
  void get(slot_t slot, double* out) const;
  /** The block where another rank of this node holds it, read in place (null: it must be got:
   *  this rank's own, another node's, or memory MPI does not share). */
  const double* in_place(slot_t slot) const;
  /** Waits as the emulated network would for these bytes from other nodes. */
  void network_delay(std::int64_t inter_node_bytes) const;
  std::shared_ptr<Communicator> comm_;
  StoreResources resources_;  // what a redistributed twin is made with
  std::unique_ptr<BudgetShare> budget_;
  std::shared_ptr<MemoryBudget> memory_;  // what the cache of remote blocks counts against
  mutable std::mutex cache_mutex_;
  mutable std::condition_variable cache_ready_;
  mutable std::unordered_map<slot_t, std::unique_ptr<Cached>> cache_;
  mutable bool keep_fetched_ = false;  // under cache_mutex_
  // Blocks of the node's other ranks read in place while keep_fetched_: counted as moved the
  // first time, as a kept block is (under cache_mutex_).
  mutable std::unordered_set<slot_t> read_in_place_;
  std::atomic<Outbox*> outbox_{nullptr};
  std::vector<int> owner_;
  std::vector<MPI_Aint> offset_;  // per slot, in doubles, within its owner's part of the window
  MPI_Win win_ = MPI_WIN_NULL;
  std::int64_t window_id_ = 0;
  double* base_ = nullptr;
  // Per rank of this node (others: null), its part of the window, which MPI placed in memory the
  // node shares (MPI_Win_shared_query): its blocks are read there, without a get.
  std::vector<const double*> node_base_;
};

}  // namespace tilecc
