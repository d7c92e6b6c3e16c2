#pragma once
/** @file The block-store protocol: where the canonical blocks of a tensor live, how a task reads
 * and writes them, and every transfer counted by class. */
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tilecc/budget.hpp"
#include "tilecc/mappings.hpp"
#include "tilecc/mem.hpp"
#include "tilecc/outbox.hpp"
#include "tilecc/shape.hpp"

namespace tilecc {

/** The classes of block transfer a store counts: a zero-copy view of a block in this process's
 *  memory, a copy within it, a copy from another rank on this node or another node, a read from or
 *  a write to disk. */
enum class Transfer : std::uint8_t { view, copy, intra_node, inter_node, disk_read, disk_write };
inline constexpr int num_transfers = 6;
/** "view", "copy", "intra_node", "inter_node", "disk_read", "disk_write". */
const char* transfer_name(Transfer transfer);

/** Bytes and calls per transfer class, exact, added to from any worker at once. Each thread
 *  adds to its own cache line (one of `shards`), so that workers fetching blocks of one tensor
 *  do not contend for the counter; totals() sums them. */
class TransferCounter {
 public:
  struct Totals {
    std::array<std::int64_t, num_transfers> bytes{}, calls{};
  };
  void add(Transfer transfer, extent_t bytes) {
    const auto k = static_cast<std::size_t>(transfer);
    Shard& shard = shards_[this_thread_shard()];
    shard.bytes[k].fetch_add(bytes, std::memory_order_relaxed);
    shard.calls[k].fetch_add(1, std::memory_order_relaxed);
  }
  Totals totals() const;
  void reset();

 private:
  static constexpr std::size_t shards = 16;
  struct alignas(64) Shard {
    std::array<std::atomic<std::int64_t>, num_transfers> bytes{}, calls{};
  };
  static std::size_t this_thread_shard();
  std::array<Shard, shards> shards_{};
};

class Communicator;
class ScratchSpace;

/** Every block read (fetch) and written (writable, accumulate, write) by the stores of one
 *  runtime's tensors, by transfer class: what moved during a job, whatever tensors came and went.
 */
struct Traffic {
  TransferCounter reads, writes;
};

/** What a runtime gives the stores of its tensors: its cache of freed mappings, its traffic
 *  counters, its memory budget and, for a distributed runtime, its communicator (any may be
 *  null). */
struct StoreResources {
  std::shared_ptr<MappingCache> mappings;
  std::shared_ptr<Communicator> comm;
  std::shared_ptr<Traffic> traffic;
  std::shared_ptr<MemoryBudget> budget;
  std::shared_ptr<ScratchSpace> scratch;  ///< for disk stores
};

/** Bytes a store holds, counted against a runtime's budget for as long as the store lives. */
class BudgetShare {
 public:
  BudgetShare() = default;
  BudgetShare(std::shared_ptr<MemoryBudget> budget, std::int64_t bytes, const char* what)
      : budget_(std::move(budget)), bytes_(bytes) {
    if (budget_) budget_->reserve(bytes_, what);
  }
  BudgetShare(const BudgetShare&) = delete;
  BudgetShare& operator=(const BudgetShare&) = delete;
  ~BudgetShare() {
    if (budget_) budget_->release(bytes_);
  }

 private:
  std::shared_ptr<MemoryBudget> budget_;
  std::int64_t bytes_ = 0;
};

/**
 * Where blocks live, behind one protocol, so that a task never assumes a block is a pointer in
 * this process's memory:
 *
 *  - fetch(): the block for reading: a zero-copy view where the store holds it locally and allows
 *    views, else a copy in the worker's buffer;
 *  - writable(): a view a task may accumulate into in place, or nullptr, in which case the task
 *    computes its contribution in a buffer and hands it to accumulate();
 *  - accumulate() / write(): block += values, block = values;
 *  - prefetch(): a hint that blocks will be fetched soon, so that a store can start moving them;
 *  - stage() / release(): blocks a schedule holds in memory for a while (disk stores).
 *
 * Every transfer is counted (transfers()). Blocks are dense row-major arrays with the extents of
 * their tiles. Element-wise operations (scale, add, packing) work on the resident blocks this
 * process owns (owns(), block()): all of them for the stores in this process's memory, this
 * rank's for a distributed one; writes reach every reader after complete_writes().
 *
 * @code
 *   auto store = make_store("memory", shape);
 *   const double* x = store->fetch(slot, worker_buffer);   // a view: counted as one view
 * @endcode
 */
class BlockStore {
 public:
  explicit BlockStore(const BlockShape& shape, std::shared_ptr<Traffic> traffic = nullptr)
      : shape_(&shape), traffic_(std::move(traffic)) {}
  virtual ~BlockStore() = default;
  BlockStore(const BlockStore&) = delete;
  BlockStore& operator=(const BlockStore&) = delete;

  virtual const double* fetch(slot_t slot, ScratchBuffer& buffer) const = 0;
  virtual double* writable(slot_t slot) = 0;
  virtual void accumulate(slot_t slot, const double* values) = 0;
  virtual void write(slot_t slot, const double* values) = 0;
  virtual void prefetch(std::span<const slot_t> slots) const { (void)slots; }
  /** While on, another process's block that fetch() moves is kept (where the memory budget has
   *  room) and found there by later fetches: a process moves each block once while it is on.
   *  Turning it off lets them all go; it must be, before the blocks can change (a contraction
   *  keeps its operands' for its own run). Stores without other processes' blocks ignore it. */
  virtual void keep_fetched(bool on) const { (void)on; }
  /** While `outbox` is set (WorkQ's Q2), accumulate() of a block another process owns copies the
   *  values into the outbox, where the budget has room and the outbox takes them, and returns at
   *  once; the outbox's courier then send_posted()s them. Null sends every update at once again.
   *  Stores without other processes' blocks ignore it. */
  virtual void post_updates_to(Outbox* outbox) { (void)outbox; }
  /** Sends updates that this store posted to their owners, together (the courier's side). */
  virtual void send_posted(std::span<PostedUpdate> updates) { (void)updates; }
  /** Keep these blocks in memory until release()d (a stage schedule's loads and unloads; a
   *  block staged twice is released twice): released, a block leaves memory at once, or with
   *  `cache`, stays until its room is needed. Stores whose blocks are always in memory ignore
   *  both. */
  virtual void stage(std::span<const slot_t> slots) const { (void)slots; }
  virtual void release(std::span<const slot_t> slots, bool cache = false) const {
    (void)slots;
    (void)cache;
  }
  /** What stage_ahead() did with a block: took it in (to be released as a stage()d one), had
   *  no need to (it is in memory already, or always is), or found no room for it. */
  enum class Ahead : std::uint8_t { taken, not_needed, no_room };
  /** stage() the block if it is not in memory and there is room beside what is held: a courier
   *  reading ahead of the tasks. */
  virtual Ahead stage_ahead(slot_t slot) const {
    (void)slot;
    return Ahead::not_needed;
  }
  /** Whether fetch() returns views (a task then need not time it as a transfer). */
  virtual bool zero_copy() const = 0;
  /** Whether this process holds the block (and so computes it in element-wise operations). */
  virtual bool owns(slot_t slot) const {
    (void)slot;
    return true;
  }
  /** Every write and accumulate made so far, by any process, is visible to every reader once all
   *  of the tensor's processes have called this (collective for a distributed store). */
  virtual void complete_writes() {}
  /** The rank each block lives on, by slot; empty for a store of one process. */
  virtual std::vector<int> owners() const { return {}; }
  /** A store of the same blocks with block s on rank owners[s], its values moved there
   *  (collective, after complete_writes(); both layouts are held, against the memory budget,
   *  until this one is let go); null for a store of one process, whose blocks have no owners to
   *  change. */
  virtual std::unique_ptr<BlockStore> redistributed(std::span<const int> owners) const {
    (void)owners;
    return nullptr;
  }

  /** A resident block this process owns, for element-wise operations. */
  virtual double* block(slot_t slot) = 0;
  virtual const double* block(slot_t slot) const = 0;

  /** The registered name ("memory", "copy", ...). */
  virtual const char* kind() const = 0;

  const TransferCounter& transfers() const { return transfers_; }
  TransferCounter& transfers() { return transfers_; }
  const BlockShape& shape() const { return *shape_; }

 protected:
  extent_t bytes(slot_t slot) const {
    return shape_->block_size(slot) * static_cast<extent_t>(sizeof(double));
  }
  /** Counts one read (fetch) or write of the block, here and in the runtime's traffic. */
  void count_read(Transfer transfer, slot_t slot) const {
    transfers_.add(transfer, bytes(slot));
    if (traffic_) traffic_->reads.add(transfer, bytes(slot));
  }
  void count_write(Transfer transfer, slot_t slot) const {
    transfers_.add(transfer, bytes(slot));
    if (traffic_) traffic_->writes.add(transfer, bytes(slot));
  }
  mutable TransferCounter transfers_;
  const BlockShape* shape_;  // owned by the tensor, which outlives its store
  std::shared_ptr<Traffic> traffic_;
};

/**
 * All blocks in one 64-byte-aligned allocation, each at an offset this store assigns (the layout is
 * the store's, not the shape's): fetch() and writable() are zero-copy views.
 *
 * @code
 *   MemoryStore store(shape);           // zero-initialised
 *   double* b = store.block(0);
 * @endcode
 */
class MemoryStore : public BlockStore {
 public:
  /** Storage of 128 KiB and more is mapped from the kernel: taken from the runtime's mapping
   *  cache (kept alive by the store) and given back to it when the store is freed, or mapped and
   *  unmapped directly without one. */
  explicit MemoryStore(const BlockShape& shape, const StoreResources& resources = {});
  const double* fetch(slot_t slot, ScratchBuffer& buffer) const override;
  double* writable(slot_t slot) override;
  void accumulate(slot_t slot, const double* values) override;
  void write(slot_t slot, const double* values) override;
  bool zero_copy() const override { return true; }
  double* block(slot_t slot) override { return data_.get() + offset(slot); }
  const double* block(slot_t slot) const override { return data_.get() + offset(slot); }
  const char* kind() const override { return "memory"; }

  /** Doubles allocated, 64-byte padding of each block included. */
  extent_t storage_doubles() const { return offsets_.back(); }

 protected:
  extent_t offset(slot_t slot) const { return offsets_[static_cast<std::size_t>(slot)]; }

 private:
  struct Free {
    std::size_t mapped_bytes = 0;            ///< size of the mapping, or 0 for a malloc'ed store
    std::shared_ptr<MappingCache> mappings;  ///< where a mapping goes back to, if anywhere
    void operator()(double* p) const;
  };
  std::vector<extent_t> offsets_;  // per slot, then the total
  std::optional<BudgetShare> budget_;
  std::unique_ptr<double[], Free> data_;
};

/**
 * The test store: blocks held in memory like MemoryStore's, but no zero-copy path: every fetch
 * is a copy into the worker's buffer and every task writes through accumulate(). Results through
 * it must equal the memory store's exactly, which proves the pipeline never reaches past the
 * protocol.
 */
class CopyStore final : public MemoryStore {
 public:
  using MemoryStore::MemoryStore;
  const double* fetch(slot_t slot, ScratchBuffer& buffer) const override;
  double* writable(slot_t) override { return nullptr; }
  bool zero_copy() const override { return false; }
  const char* kind() const override { return "copy"; }
};

/**
 * A store with no storage, for planning a job without running it (`tilecc plan`): its bytes are
 * counted against the runtime's budget as a memory store's would be (so the budget's high-water
 * mark is the job's), and any access to a block is an error.
 */
class NullStore final : public BlockStore {
 public:
  NullStore(const BlockShape& shape, const StoreResources& resources);
  const double* fetch(slot_t, ScratchBuffer&) const override { refuse(); }
  double* writable(slot_t) override { refuse(); }
  void accumulate(slot_t, const double*) override { refuse(); }
  void write(slot_t, const double*) override { refuse(); }
  bool zero_copy() const override { return true; }
  double* block(slot_t) override { refuse(); }
  const double* block(slot_t) const override { refuse(); }
  const char* kind() const override { return "none"; }

 private:
  [[noreturn]] static void refuse();
  BudgetShare budget_;
};

/** Makes a store for a shape with a runtime's resources; registered by name. */
using StoreFactory =
    std::function<std::unique_ptr<BlockStore>(const BlockShape&, const StoreResources&)>;

/** Register a store by name; a name registered twice is an error. */
void register_store(const std::string& name, StoreFactory factory);
/** A new store of the named kind; an unknown name is an error listing the registered ones. */
std::unique_ptr<BlockStore> make_store(const std::string& name, const BlockShape& shape,
                                       const StoreResources& resources = {});
/** Registered store names, sorted. */
std::vector<std::string> store_names();
/** Refuses a name no store is registered under, with one sentence listing those that are. */
void check_store_name(const std::string& name);

}  // namespace tilecc
