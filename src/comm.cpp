#include "tilecc/comm.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "tilecc/error.hpp"
#include "tilecc/store.hpp"

namespace tilecc {

bool Communicator::ready() {
  int initialized = 0, finalized = 0, provided = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return false;
  MPI_Query_thread(&provided);
  return provided == MPI_THREAD_MULTIPLE;
}

namespace {

// A switch from the environment variable `name`: `on`, `off`, or unset (`by_default`).
bool switch_setting(const char* name, bool by_default) {
  const char* text = std::getenv(name);
  const std::string value = text == nullptr ? "" : text;
  TILECC_CHECK(value.empty() || value == "on" || value == "off", name, " is '", value,
               "'; set it to 'on' or 'off', or unset it (", by_default ? "on" : "off", ").");
  return value.empty() ? by_default : value == "on";
}

}  // namespace

Communicator::Communicator(MPI_Comm comm, int ranks_per_node)
    : network_(NetworkEmulation::from_environment()),
      fetch_once_(switch_setting("TILECC_FETCH_ONCE", true)),
      courier_sends_updates_(switch_setting("TILECC_WORKQ_Q2", true)),
      workers_fetch_when_idle_(switch_setting("TILECC_WORKQ_SWITCH", false)) {
  TILECC_CHECK(ready(),
               "distributed tilecc needs MPI initialised with MPI_THREAD_MULTIPLE (mpi4py does "
               "so when imported); launch it with mpiexec.");
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  node_.resize(static_cast<std::size_t>(size_));
  if (ranks_per_node > 0) {
    TILECC_CHECK(size_ % ranks_per_node == 0, "TILECC_RANKS_PER_NODE=", ranks_per_node,
                 " does not divide the ", size_, " ranks; give a divisor of ", size_,
                 " or unset it.");
    for (int r = 0; r < size_; ++r) node_[static_cast<std::size_t>(r)] = r / ranks_per_node;
    nodes_ = size_ / ranks_per_node;
    virtual_nodes_ = true;
  } else {
    find_nodes();
  }
  MPI_Comm shared = MPI_COMM_NULL;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &shared);
  MPI_Comm_split(shared, node_of(rank_), rank_, &node_comm_);
  MPI_Comm_free(&shared);
  const MPI_Aint counter_bytes = rank_ == 0 ? sizeof(std::int64_t) : 0;
  MPI_Win_allocate(counter_bytes, sizeof(std::int64_t), MPI_INFO_NULL, comm_, &counter_value_,
                   &counter_);
  if (rank_ == 0) *counter_value_ = 0;
  MPI_Win_lock_all(MPI_MODE_NOCHECK, counter_);
  barrier();
}

void Communicator::find_nodes() {
  // A node is named by its lowest rank; nodes are numbered in the order of those ranks.
  MPI_Comm shared = MPI_COMM_NULL;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &shared);
  int leader = rank_;
  MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, shared);
  MPI_Comm_free(&shared);
  std::vector<int> leaders(static_cast<std::size_t>(size_));
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm_);
  std::vector<int> distinct = leaders;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  for (int r = 0; r < size_; ++r)
    node_[static_cast<std::size_t>(r)] = static_cast<int>(
        std::lower_bound(distinct.begin(), distinct.end(), leaders[static_cast<std::size_t>(r)]) -
        distinct.begin());
  nodes_ = static_cast<int>(distinct.size());
}

Communicator::~Communicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || comm_ == MPI_COMM_NULL) return;
  // Windows retired on some ranks only are left to MPI_Finalize.
  MPI_Win_unlock_all(counter_);
  MPI_Win_free(&counter_);
  MPI_Comm_free(&node_comm_);
  MPI_Comm_free(&comm_);
}

void Communicator::retire(std::int64_t id, MPI_Win window) {
  std::lock_guard lock(retired_mutex_);
  retired_.emplace(id, window);
}

void Communicator::free_retired() {
  std::vector<std::int64_t> ids;
  {
    std::lock_guard lock(retired_mutex_);
    for (const auto& [id, window] : retired_) ids.push_back(id);
  }
  // The ids every rank has retired: MIN over the ranks of "retired here", over the ids from the
  // lowest any rank holds to the highest.
  std::int64_t range[2] = {ids.empty() ? -INT64_MAX : -ids.front(), ids.empty() ? -1 : ids.back()};
  MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_INT64_T, MPI_MAX, comm_);
  const std::int64_t first = -range[0], last = range[1];
  if (last < 0 || first > last) return;
  std::vector<int> everywhere(static_cast<std::size_t>(last - first + 1), 0);
  for (const std::int64_t id : ids) everywhere[static_cast<std::size_t>(id - first)] = 1;
  MPI_Allreduce(MPI_IN_PLACE, everywhere.data(), static_cast<int>(everywhere.size()), MPI_INT,
                MPI_MIN, comm_);
  std::lock_guard lock(retired_mutex_);
  for (auto it = retired_.begin(); it != retired_.end();) {
    if (it->first <= last && everywhere[static_cast<std::size_t>(it->first - first)] != 0) {
      MPI_Win_unlock_all(it->second);
      MPI_Win_free(&it->second);
      it = retired_.erase(it);
    } else {
      ++it;
    }
  }
}

std::unique_ptr<BudgetShare> reserve_on_every_rank(const std::shared_ptr<MemoryBudget>& budget,
                                                   std::int64_t bytes, const char* what,
                                                   const Communicator* comm) {
  std::unique_ptr<BudgetShare> share;
  std::string refused;
  try {
    if (budget != nullptr && bytes > 0) share = std::make_unique<BudgetShare>(budget, bytes, what);
  } catch (const InputError& error) {
    refused = error.what();
  }
  int over = refused.empty() ? 0 : 1;
  if (comm != nullptr && comm->size() > 1)
    MPI_Allreduce(MPI_IN_PLACE, &over, 1, MPI_INT, MPI_MAX, comm->comm());
  if (over == 0) return share;
  throw InputError(!refused.empty() ? refused
                                    : detail::concat("another rank's share of ", what,
                                                     " is over the memory budget; raise the "
                                                     "memory budget, or spread the job over "
                                                     "more ranks and nodes."));
}

void Communicator::barrier() const { MPI_Barrier(comm_); }

void Communicator::synchronise() {
  int pending = 0;
  {
    std::lock_guard lock(retired_mutex_);
    pending = retired_.empty() ? 0 : 1;
  }
  // An allreduce returns on no rank before every rank has entered it: a barrier.
  MPI_Allreduce(MPI_IN_PLACE, &pending, 1, MPI_INT, MPI_MAX, comm_);
  if (pending != 0) free_retired();
}

void Communicator::sum(std::span<double> values) const {
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM,
                comm_);
}

double Communicator::sum(double value) const {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, comm_);
  return value;
}

std::int64_t Communicator::sum(std::int64_t value) const {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT64_T, MPI_SUM, comm_);
  return value;
}

void Communicator::broadcast(std::span<double> values) const {
  MPI_Bcast(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, 0, comm_);
}

std::vector<task_id_t> rank_share(std::span<const double> costs, const Communicator& comm) {
  const std::vector<int> bin_of = lpt_bins(costs, comm.size());
  std::vector<task_id_t> share;
  for (std::size_t t = 0; t < bin_of.size(); ++t)
    if (bin_of[t] == comm.rank()) share.push_back(static_cast<task_id_t>(t));
  return share;
}

task_id_t GlobalCounter::fetch_add(task_id_t n) {
  const MPI_Win win = comm_->counter_window();
  std::int64_t add = n, before = 0;
  MPI_Fetch_and_op(&add, &before, MPI_INT64_T, 0, 0, MPI_SUM, win);
  MPI_Win_flush(0, win);
  return before;
}

void GlobalCounter::reset() {
  comm_->barrier();  // no rank still fetches from the last run
  if (comm_->rank() == 0) {
    const MPI_Win win = comm_->counter_window();
    const std::int64_t zero = 0;
    MPI_Accumulate(&zero, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, MPI_REPLACE, win);
    MPI_Win_flush(0, win);
  }
  comm_->barrier();  // no rank fetches before it is 0
}

}  // namespace tilecc
