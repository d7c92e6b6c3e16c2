#include "tilecc/node_shared.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "tilecc/comm.hpp"
#include "tilecc/error.hpp"
#include "tilecc/store.hpp"

namespace tilecc {

NodeShared::NodeShared(std::size_t n, std::shared_ptr<Communicator> comm,
                       const std::shared_ptr<MemoryBudget>& budget)
    : comm_(std::move(comm)), size_(n) {
  reserved_ = reserve_on_every_rank(
      budget, writes_on(comm_.get()) ? static_cast<std::int64_t>(n * sizeof(double)) : 0,
      "the (T) step's inputs", comm_.get());
  if (comm_ == nullptr || comm_->size() == 1) {
    comm_.reset();
    own_.assign(n, 0.0);
    data_ = own_.data();
    return;
  }
  MPI_Comm node = comm_->node_comm();
  writer_ = writes_on(comm_.get());
  const auto bytes = static_cast<MPI_Aint>(writer_ ? n * sizeof(double) : 0);
  double* mine = nullptr;
  if (MPI_Win_allocate_shared(bytes, sizeof(double), MPI_INFO_NULL, node, &mine, &win_) !=
      MPI_SUCCESS)
    throw OutOfMemory(n * sizeof(double), "an array the ranks of a node share");
  MPI_Aint size = 0;
  int unit = 0;
  MPI_Win_shared_query(win_, 0, &size, &unit, &data_);
  window_id_ = comm_->next_window_id();
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);  // unlocked when the communicator frees it
  if (writer_) std::fill_n(data_, n, 0.0);
}

bool NodeShared::writes_on(const Communicator* comm) {
  if (comm == nullptr || comm->size() == 1) return true;
  int node_rank = 0;
  MPI_Comm_rank(comm->node_comm(), &node_rank);
  return node_rank == 0;
}

void NodeShared::publish(std::initializer_list<NodeShared*> arrays) {
  const Communicator* comm = nullptr;
  for (NodeShared* a : arrays)
    if (a->win_ != MPI_WIN_NULL) {
      MPI_Win_sync(a->win_);
      comm = a->comm_.get();
    }
  if (comm == nullptr) return;  // arrays of one process
  MPI_Barrier(comm->node_comm());
  for (NodeShared* a : arrays)
    if (a->win_ != MPI_WIN_NULL) MPI_Win_sync(a->win_);
}

void NodeShared::release() {
  if (win_ == MPI_WIN_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  // Freeing is collective, and ranks let go of their kernels at different moments: the window is
  // retired, and freed where every rank has (Communicator::free_retired).
  if (!finalized) comm_->retire(window_id_, win_);
  win_ = MPI_WIN_NULL;
}

NodeShared::~NodeShared() { release(); }

NodeShared::NodeShared(NodeShared&& other) noexcept { *this = std::move(other); }

NodeShared& NodeShared::operator=(NodeShared&& other) noexcept {
  if (this == &other) return *this;
  release();
  comm_ = std::move(other.comm_);
  reserved_ = std::move(other.reserved_);
  own_ = std::move(other.own_);
  win_ = std::exchange(other.win_, MPI_WIN_NULL);
  window_id_ = other.window_id_;
  size_ = std::exchange(other.size_, 0);
  writer_ = other.writer_;
  data_ = win_ != MPI_WIN_NULL ? std::exchange(other.data_, nullptr) : own_.data();
  other.data_ = nullptr;
  return *this;
}

}  // namespace tilecc
