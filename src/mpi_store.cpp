#include "tilecc/mpi_store.hpp"

#include <algorithm>

#include "detail/checked.hpp"
#include "tilecc/error.hpp"

namespace tilecc {

std::vector<int> hash_placement(slot_t blocks, int ranks) {
  std::vector<int> owner(static_cast<std::size_t>(blocks));
  for (slot_t s = 0; s < blocks; ++s) {
    // splitmix64's finaliser: neighbouring slots (often blocks of one size) land far apart.
    auto x = static_cast<std::uint64_t>(s) + 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    x ^= x >> 31;
    owner[static_cast<std::size_t>(s)] = static_cast<int>(x % static_cast<std::uint64_t>(ranks));
  }
  return owner;
}

MpiStore::MpiStore(const BlockShape& shape, std::shared_ptr<Communicator> comm,
                   const StoreResources& resources, std::vector<int> owners)
    : BlockStore(shape, resources.traffic),
      comm_(std::move(comm)),
      resources_(resources),
      memory_(resources.budget) {
  if (owners.empty()) {
    owner_ = hash_placement(shape.num_blocks(), comm_->size());
  } else {
    TILECC_CHECK(static_cast<slot_t>(owners.size()) == shape.num_blocks(), "an owner map of ",
                 owners.size(), " blocks was given to a tensor of ", shape.num_blocks(),
                 " blocks; give one owner rank per stored block.");
    for (const int o : owners)
      TILECC_CHECK(o >= 0 && o < comm_->size(), "an owner map puts a block on rank ", o,
                   " of a job on ", comm_->size(), " ranks; give ranks from 0 to ",
                   comm_->size() - 1, ".");
    owner_ = std::move(owners);
  }
  // Every rank lays out every owner's part the same way, so a block's place is known to all.
  std::vector<MPI_Aint> used(static_cast<std::size_t>(comm_->size()), 0);
  offset_.resize(static_cast<std::size_t>(shape.num_blocks()));
  for (slot_t s = 0; s < shape.num_blocks(); ++s) {
    MPI_Aint& next = used[static_cast<std::size_t>(owner(s))];
    offset_[static_cast<std::size_t>(s)] = next;
    next = detail::checked_sum<MPI_Aint>(next, shape.block_size(s), "a rank's share of a tensor");
  }
  const MPI_Aint doubles = std::max<MPI_Aint>(used[static_cast<std::size_t>(comm_->rank())], 1);
  const MPI_Aint bytes = detail::checked_product<MPI_Aint>(doubles, sizeof(double),
                                                           "a rank's share of a tensor in bytes");
  // A share over the budget stops every rank here, before the collective allocation.
  budget_ = reserve_on_every_rank(resources.budget, bytes, "a rank's share of a tensor's blocks",
                                  comm_.get());
  window_id_ = comm_->next_window_id();
  if (MPI_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, comm_->comm(), &base_, &win_) !=
      MPI_SUCCESS)
    throw OutOfMemory(static_cast<std::size_t>(bytes), "a rank's blocks");
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
  std::fill_n(base_, doubles, 0.0);
  // The node's other ranks' parts, where MPI shares them (an MPI that cannot says so by an error
  // or a null address: their blocks are then got).
  node_base_.assign(static_cast<std::size_t>(comm_->size()), nullptr);
  MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
  for (int r = 0; r < comm_->size(); ++r) {
    if (r == comm_->rank() || !comm_->same_node(r, comm_->rank())) continue;
    MPI_Aint size = 0;
    int unit = 0;
    double* part = nullptr;
    if (MPI_Win_shared_query(win_, r, &size, &unit, &part) == MPI_SUCCESS &&
        size >= static_cast<MPI_Aint>(used[static_cast<std::size_t>(r)] * sizeof(double)))
      node_base_[static_cast<std::size_t>(r)] = part;
  }
  MPI_Win_set_errhandler(win_, MPI_ERRORS_ARE_FATAL);
  comm_->barrier();  // every rank's blocks are zero before anyone reads or adds to them
}

const double* MpiStore::in_place(slot_t slot) const {
  const double* part = node_base_[static_cast<std::size_t>(owner(slot))];
  return part != nullptr ? part + offset_[static_cast<std::size_t>(slot)] : nullptr;
}

MpiStore::~MpiStore() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) comm_->retire(window_id_, win_);
}

Transfer MpiStore::transfer_to(slot_t slot, Transfer local) const {
  const int o = owner(slot);
  if (o == comm_->rank()) return local;
  return comm_->same_node(o, comm_->rank()) ? Transfer::intra_node : Transfer::inter_node;
}

void MpiStore::get(slot_t slot, double* out) const {
  const auto n = static_cast<int>(shape_->block_size(slot));
  MPI_Get(out, n, MPI_DOUBLE, owner(slot), offset_[static_cast<std::size_t>(slot)], n, MPI_DOUBLE,
          win_);
}

void MpiStore::network_delay(std::int64_t inter_node_bytes) const {
  if (inter_node_bytes > 0) comm_->network().delay(inter_node_bytes);
}

const double* MpiStore::fetch(slot_t slot, ScratchBuffer& buffer) const {
  const int o = owner(slot);
  if (o == comm_->rank()) {
    count_read(Transfer::view, slot);
    return base_ + offset_[static_cast<std::size_t>(slot)];
  }
  if (const double* shared = in_place(slot)) {
    // Another rank's block, read where it lives: moved between ranks once per contraction
    // when a rank keeps what it gets (as a kept block is), else at every read (as gets are).
    bool first = true;
    {
      std::lock_guard lock(cache_mutex_);
      if (keep_fetched_) first = read_in_place_.insert(slot).second;
    }
    count_read(first ? Transfer::intra_node : Transfer::view, slot);
    return shared;
  }
  Cached* kept = nullptr;
  {
    std::unique_lock lock(cache_mutex_);
    if (const auto found = cache_.find(slot); found != cache_.end()) {
      const Cached& cached = *found->second;
      cache_ready_.wait(lock, [&] { return cached.ready; });
      count_read(Transfer::view, slot);  // moved (and counted) when it was first got
      return cached.values.data();
    }
    if (keep_fetched_) kept = make_entry(slot);  // other workers now wait for this get
  }
  const Transfer transfer = transfer_to(slot, Transfer::view);
  count_read(transfer, slot);
  double* out = kept != nullptr ? kept->values.data() : buffer.get(shape_->block_size(slot));
  get(slot, out);
  MPI_Win_flush(o, win_);
  if (transfer == Transfer::inter_node) network_delay(shape_->block_size(slot) * 8);
  if (kept != nullptr) {
    {
      std::lock_guard lock(cache_mutex_);
      kept->ready = true;
    }
    cache_ready_.notify_all();
  }
  return out;
}

MpiStore::Cached* MpiStore::make_entry(slot_t slot) const {
  const std::int64_t bytes = shape_->block_size(slot) * 8;
  if (memory_) {
    try {
      memory_->reserve(bytes, "the cache of remote blocks");
    } catch (const InputError&) {
      return nullptr;  // no room: the task fetches it into its own buffer
    }
  }
  auto& entry = cache_[slot] = std::make_unique<Cached>();
  entry->reserved = memory_ ? bytes : 0;
  entry->values.resize(static_cast<std::size_t>(shape_->block_size(slot)));
  return entry.get();
}

void MpiStore::keep_fetched(bool on) const {
  std::lock_guard lock(cache_mutex_);
  keep_fetched_ = on;
  if (on) return;
  read_in_place_.clear();
  for (const auto& [slot, entry] : cache_)
    if (memory_) memory_->release(entry->reserved);
  cache_.clear();
}

void MpiStore::prefetch(std::span<const slot_t> slots) const {
  std::vector<std::pair<slot_t, Cached*>> issued;
  {
    std::lock_guard lock(cache_mutex_);
    for (const slot_t slot : slots) {
      if (owner(slot) == comm_->rank() || in_place(slot) != nullptr || cache_.contains(slot))
        continue;
      if (Cached* entry = make_entry(slot)) issued.emplace_back(slot, entry);
    }
  }
  if (issued.empty()) return;
  // Every get issued, then completed together: the emulated network's latency is paid once.
  std::int64_t inter_node = 0;
  for (const auto& [slot, entry] : issued) {
    const Transfer transfer = transfer_to(slot, Transfer::view);
    count_read(transfer, slot);
    if (transfer == Transfer::inter_node) inter_node += shape_->block_size(slot) * 8;
    get(slot, entry->values.data());
  }
  MPI_Win_flush_all(win_);
  network_delay(inter_node);
  {
    std::lock_guard lock(cache_mutex_);
    for (const auto& [slot, entry] : issued) entry->ready = true;
  }
  cache_ready_.notify_all();
}

void MpiStore::release(std::span<const slot_t> slots, bool /*cache*/) const {
  std::lock_guard lock(cache_mutex_);
  for (const slot_t slot : slots) {
    const auto found = cache_.find(slot);
    if (found == cache_.end()) continue;
    if (memory_) memory_->release(found->second->reserved);
    cache_.erase(found);
  }
}

void MpiStore::accumulate(slot_t slot, const double* values) { update(slot, values, MPI_SUM); }

void MpiStore::write(slot_t slot, const double* values) { update(slot, values, MPI_REPLACE); }

void MpiStore::update(slot_t slot, const double* values, MPI_Op op) {
  const int o = owner(slot);
  count_write(transfer_to(slot, Transfer::copy), slot);
  if (op == MPI_SUM && o != comm_->rank() && post(slot, values)) return;
  const auto n = static_cast<int>(shape_->block_size(slot));
  MPI_Accumulate(values, n, MPI_DOUBLE, o, offset_[static_cast<std::size_t>(slot)], n, MPI_DOUBLE,
                 op, win_);
  MPI_Win_flush_local(o, win_);  // the caller's buffer may be reused
  if (o != comm_->rank() && !comm_->same_node(o, comm_->rank()))
    network_delay(static_cast<std::int64_t>(n) * 8);
}

bool MpiStore::post(slot_t slot, const double* values) {
  Outbox* outbox = outbox_.load(std::memory_order_acquire);
  if (outbox == nullptr) return false;
  const extent_t n = shape_->block_size(slot);
  PostedUpdate update{this, slot, {}, memory_ ? n * 8 : 0};
  if (memory_) {
    try {
      memory_->reserve(update.reserved, "the updates handed to the courier");
    } catch (const InputError&) {
      return false;  // no room for a copy: the worker sends it itself
    }
  }
  update.values.assign(values, values + n);
  const std::int64_t reserved = update.reserved;
  if (outbox->post(std::move(update))) return true;
  if (memory_) memory_->release(reserved);
  return false;
}

void MpiStore::send_posted(std::span<PostedUpdate> updates) {
  // Every accumulate issued, then completed together: the emulated network's latency is paid
  // once.
  std::int64_t inter_node = 0;
  for (const PostedUpdate& update : updates) {
    const int o = owner(update.slot);
    const auto n = static_cast<int>(update.values.size());
    MPI_Accumulate(update.values.data(), n, MPI_DOUBLE, o,
                   offset_[static_cast<std::size_t>(update.slot)], n, MPI_DOUBLE, MPI_SUM, win_);
    if (!comm_->same_node(o, comm_->rank())) inter_node += static_cast<std::int64_t>(n) * 8;
  }
  MPI_Win_flush_local_all(win_);  // the copies may go
  network_delay(inter_node);
  for (const PostedUpdate& update : updates)
    if (memory_) memory_->release(update.reserved);
}

void MpiStore::complete_writes() {
  MPI_Win_flush_all(win_);  // this rank's updates are done at their targets
  comm_->synchronise();     // and so are every other rank's (retired windows freed there too)
  MPI_Win_sync(win_);       // this rank's loads see them
}

std::unique_ptr<BlockStore> MpiStore::redistributed(std::span<const int> owners) const {
  auto next = std::make_unique<MpiStore>(*shape_, comm_, resources_,
                                         std::vector<int>(owners.begin(), owners.end()));
  // Each rank gets its new blocks from their old owners, all issued, then completed together.
  std::int64_t inter_node = 0;
  for (slot_t s = 0; s < shape_->num_blocks(); ++s) {
    if (next->owner(s) != comm_->rank()) continue;
    const Transfer transfer = transfer_to(s, Transfer::copy);
    count_read(transfer, s);
    if (transfer == Transfer::inter_node) inter_node += bytes(s);
    get(s, next->base_ + next->offset_[static_cast<std::size_t>(s)]);
  }
  MPI_Win_flush_all(win_);
  network_delay(inter_node);
  comm_->barrier();  // every rank has its blocks before any old window can go
  return next;
}

double* MpiStore::block(slot_t slot) {
  TILECC_CHECK(owns(slot), "block ", slot, " of ", shape_->describe(), " lives on rank ",
               owner(slot), ", not on rank ", comm_->rank(),
               "; an element-wise operation may touch only the blocks its rank owns.");
  return base_ + offset_[static_cast<std::size_t>(slot)];
}

const double* MpiStore::block(slot_t slot) const {
  return const_cast<MpiStore*>(this)->block(slot);
}

}  // namespace tilecc
