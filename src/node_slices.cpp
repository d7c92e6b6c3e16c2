#include "tilecc/node_slices.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "tilecc/comm.hpp"
#include "tilecc/error.hpp"
#include "tilecc/sched.hpp"
#include "tilecc/store.hpp"

namespace tilecc {

NodeSlices::NodeSlices(std::span<const std::size_t> sizes, std::shared_ptr<Communicator> comm,
                       std::span<const std::size_t> weights,
                       const std::shared_ptr<MemoryBudget>& budget)
    : comm_(std::move(comm)), size_(sizes.begin(), sizes.end()), offset_(sizes.size(), 0) {
  for (const std::size_t n : size_) largest_ = std::max(largest_, n);
  const int nodes = comm_ != nullptr && comm_->size() > 1 ? comm_->nodes() : 1;
  TILECC_CHECK(weights.empty() || weights.size() == sizes.size(),
               "slices spread over the nodes: ", weights.size(), " weights for ", sizes.size(),
               " slices.");
  const std::span<const std::size_t> by = weights.empty() ? sizes : weights;
  const std::vector<double> costs(by.begin(), by.end());
  node_ = nodes > 1 ? lpt_bins(costs, nodes) : std::vector<int>(size_.size(), 0);
  my_node_ = nodes > 1 ? comm_->node_of(comm_->rank()) : 0;
  // Each slice's offset within its node's array.
  std::vector<std::size_t> filled(static_cast<std::size_t>(nodes), 0);
  for (std::size_t s = 0; s < size_.size(); ++s) {
    std::size_t& at = filled[static_cast<std::size_t>(node_[s])];
    offset_[s] = std::exchange(at, at + size_[s]);
  }
  mine_ = filled[static_cast<std::size_t>(my_node_)];
  if (nodes == 1) {
    node_array_ = NodeShared(mine_, comm_, budget);
    writer_ = node_array_.writer();
    node_base_ = node_array_.data();
    return;
  }
  for (const std::size_t n : size_)
    TILECC_CHECK(n <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                 "a slice spread over the nodes holds ", n,
                 " doubles, more than one MPI get moves; use the molecule's point group, or a "
                 "smaller basis.");
  first_rank_.assign(static_cast<std::size_t>(nodes), comm_->size());
  for (int r = 0; r < comm_->size(); ++r) {
    int& first = first_rank_[static_cast<std::size_t>(comm_->node_of(r))];
    first = std::min(first, r);
  }
  const int first = first_rank_[static_cast<std::size_t>(my_node_)];
  writer_ = comm_->rank() == first;
  reserved_ =
      reserve_on_every_rank(budget, writer_ ? static_cast<std::int64_t>(mine_ * sizeof(double)) : 0,
                            "the (T) step's inputs", comm_.get());
  const auto bytes = static_cast<MPI_Aint>(writer_ ? mine_ * sizeof(double) : 0);
  double* base = nullptr;
  if (MPI_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, comm_->comm(), &base, &win_) !=
      MPI_SUCCESS)
    throw OutOfMemory(mine_ * sizeof(double), "a node's slices of an array spread over the nodes");
  window_id_ = comm_->next_window_id();
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);  // unlocked when the communicator frees it
  if (writer_) {
    std::fill_n(base, mine_, 0.0);
    node_base_ = base;
  } else {
    MPI_Aint size = 0;
    int unit = 0;
    MPI_Win_shared_query(win_, first, &size, &unit, &node_base_);
    if (size < static_cast<MPI_Aint>(mine_ * sizeof(double))) node_base_ = nullptr;
  }
}

bool NodeSlices::held(std::size_t s) const { return node_[s] == my_node_; }

double* NodeSlices::writable(std::size_t s) {
  TILECC_CHECK(writer_ && held(s), "slice ", s, " is written by the first rank of node ", node_[s],
               ", not by this rank.");
  return node_base_ + offset_[s];
}

void NodeSlices::publish(std::initializer_list<NodeSlices*> arrays) {
  const Communicator* comm = nullptr;
  for (NodeSlices* a : arrays)
    if (a->win_ != MPI_WIN_NULL) {
      MPI_Win_sync(a->win_);
      comm = a->comm_.get();
    } else {
      NodeShared::publish({&a->node_array_});  // on one node: its ranks alone read them
    }
  if (comm == nullptr) return;
  comm->barrier();  // other nodes' ranks get these slices too
  for (NodeSlices* a : arrays)
    if (a->win_ != MPI_WIN_NULL) MPI_Win_sync(a->win_);
}

std::int64_t NodeSlices::held_bytes() const {
  return writer_ ? static_cast<std::int64_t>(mine_ * sizeof(double)) : 0;
}

NodeSlices::Cache& NodeSlices::cache_of(int worker) const {
  const auto w = static_cast<std::size_t>(worker);
  std::lock_guard lock(caches_mutex_);
  if (caches_.size() <= w) caches_.resize(w + 1);
  if (!caches_[w]) caches_[w] = std::make_unique<Cache>();
  return *caches_[w];
}

const double* NodeSlices::read(std::size_t s, int worker) const {
  if (held(s) && node_base_ != nullptr) return node_base_ + offset_[s];
  Cache& cache = cache_of(worker);
  const auto found = std::find(cache.slice.begin(), cache.slice.end(), s);
  const auto at = static_cast<std::size_t>(found - cache.slice.begin());
  if (found != cache.slice.end()) {
    std::rotate(cache.slice.begin(), found, found + 1);  // most recently used first
    std::rotate(cache.values.begin(), cache.values.begin() + static_cast<std::ptrdiff_t>(at),
                cache.values.begin() + static_cast<std::ptrdiff_t>(at) + 1);
    return cache.values.front().data();
  }
  if (cache.slice.size() < static_cast<std::size_t>(cached)) {
    cache.slice.push_back(s);
    cache.values.emplace_back(largest_);
  }
  // The least recently used makes room, at the front.
  std::rotate(cache.slice.rbegin(), cache.slice.rbegin() + 1, cache.slice.rend());
  std::rotate(cache.values.rbegin(), cache.values.rbegin() + 1, cache.values.rend());
  cache.slice.front() = s;
  double* buffer = cache.values.front().data();
  const int target = first_rank_[static_cast<std::size_t>(node_[s])];
  const auto n = static_cast<int>(size_[s]);
  MPI_Get(buffer, n, MPI_DOUBLE, target, static_cast<MPI_Aint>(offset_[s]), n, MPI_DOUBLE, win_);
  MPI_Win_flush(target, win_);
  const auto bytes = static_cast<std::int64_t>(size_[s] * sizeof(double));
  if (!held(s)) comm_->network().delay(bytes);  // across the (emulated) network
  fetched_.fetch_add(bytes, std::memory_order_relaxed);
  return buffer;
}

void NodeSlices::release() {
  if (win_ == MPI_WIN_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) comm_->retire(window_id_, win_);  // freed where every rank has (as NodeShared)
  win_ = MPI_WIN_NULL;
}

NodeSlices::~NodeSlices() { release(); }

NodeSlices::NodeSlices(NodeSlices&& other) noexcept { *this = std::move(other); }

NodeSlices& NodeSlices::operator=(NodeSlices&& other) noexcept {
  if (this == &other) return *this;
  release();
  comm_ = std::move(other.comm_);
  size_ = std::move(other.size_);
  offset_ = std::move(other.offset_);
  node_ = std::move(other.node_);
  first_rank_ = std::move(other.first_rank_);
  largest_ = other.largest_;
  mine_ = other.mine_;
  my_node_ = other.my_node_;
  writer_ = other.writer_;
  node_array_ = std::move(other.node_array_);
  reserved_ = std::move(other.reserved_);
  win_ = std::exchange(other.win_, MPI_WIN_NULL);
  node_base_ = win_ != MPI_WIN_NULL ? other.node_base_ : node_array_.data();
  other.node_base_ = nullptr;
  window_id_ = other.window_id_;
  fetched_.store(other.fetched_.load());
  caches_ = std::move(other.caches_);
  return *this;
}

}  // namespace tilecc
