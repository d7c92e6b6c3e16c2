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
                   const StoreResources& resources)
    : BlockStore(shape, resources.traffic), comm_(std::move(comm)) {
  owner_ = hash_placement(shape.num_blocks(), comm_->size());
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
  std::string refused;
  try {
    budget_.emplace(resources.budget, bytes, "this rank's share of a tensor's blocks");
  } catch (const InputError& e) {
    refused = e.what();
  }
  int over = refused.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &over, 1, MPI_INT, MPI_MAX, comm_->comm());
  if (over != 0) {
    budget_.reset();
    throw InputError(refused.empty() ? "another rank's share of a tensor is over the memory "
                                       "budget; raise the memory budget, or spread the job "
                                       "over more ranks."
                                     : refused);
  }
  window_id_ = comm_->next_window_id();
  if (MPI_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, comm_->comm(), &base_, &win_) !=
      MPI_SUCCESS)
    throw OutOfMemory(static_cast<std::size_t>(bytes), "a rank's blocks");
  std::fill_n(base_, doubles, 0.0);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
  comm_->barrier();  // every rank's blocks are zero before anyone reads or adds to them
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

const double* MpiStore::fetch(slot_t slot, ScratchBuffer& buffer) const {
  const int o = owner(slot);
  count_read(transfer_to(slot, Transfer::view), slot);
  if (o == comm_->rank()) return base_ + offset_[static_cast<std::size_t>(slot)];
  const extent_t n = shape_->block_size(slot);
  double* out = buffer.get(n);
  MPI_Get(out, static_cast<int>(n), MPI_DOUBLE, o, offset_[static_cast<std::size_t>(slot)],
          static_cast<int>(n), MPI_DOUBLE, win_);
  MPI_Win_flush(o, win_);
  return out;
}

void MpiStore::accumulate(slot_t slot, const double* values) { update(slot, values, MPI_SUM); }

void MpiStore::write(slot_t slot, const double* values) { update(slot, values, MPI_REPLACE); }

void MpiStore::update(slot_t slot, const double* values, MPI_Op op) {
  const int o = owner(slot);
  count_write(transfer_to(slot, Transfer::copy), slot);
  const auto n = static_cast<int>(shape_->block_size(slot));
  MPI_Accumulate(values, n, MPI_DOUBLE, o, offset_[static_cast<std::size_t>(slot)], n, MPI_DOUBLE,
                 op, win_);
  MPI_Win_flush_local(o, win_);  // the caller's buffer may be reused
}

void MpiStore::complete_writes() {
  MPI_Win_flush_all(win_);  // this rank's updates are done at their targets
  comm_->barrier();         // and so are every other rank's
  MPI_Win_sync(win_);       // this rank's loads see them
  comm_->free_retired();    // a synchronisation every rank reaches: windows all have retired go
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
