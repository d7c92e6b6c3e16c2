#pragma once
/** @file Communicator: the ranks a distributed runtime runs on, grouped into nodes, and the
 * counter they take tasks from (NWChem's NXTVAL). MPI must be initialised with
 * MPI_THREAD_MULTIPLE (as mpi4py does): every worker thread fetches, gets and accumulates. */
#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "tilecc/network.hpp"
#include "tilecc/sched.hpp"

namespace tilecc {

class BudgetShare;
class MemoryBudget;

/**
 * A duplicate of an MPI communicator, with each rank's node: the ranks sharing memory
 * (MPI_Comm_split_type(SHARED)), or, with `ranks_per_node` > 0, consecutive blocks of that many
 * ranks (virtual nodes, so that node-aware behaviour and inter-node bytes are testable on one
 * machine). It holds the task counter's window, and frees the windows of distributed tensors:
 * freeing a window is collective, but a tensor may be freed at a different moment on each rank (a
 * garbage collector picks it), so a tensor only retires its window, and the windows every rank
 * has retired are freed at the next synchronisation (free_retired()), in the order they were
 * made. Making one is collective; a process makes one and shares it.
 *
 * @code
 *   auto comm = std::make_shared<Communicator>(MPI_COMM_WORLD, 2);   // virtual nodes of 2 ranks
 *   comm->same_node(0, 1);   // true
 * @endcode
 */
class Communicator {
 public:
  explicit Communicator(MPI_Comm comm = MPI_COMM_WORLD, int ranks_per_node = 0);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int node_of(int rank) const { return node_[static_cast<std::size_t>(rank)]; }
  int nodes() const { return nodes_; }
  bool same_node(int a, int b) const { return node_of(a) == node_of(b); }
  bool virtual_nodes() const { return virtual_nodes_; }
  /** The ranks of this rank's node that share its memory (all of them, unless virtual nodes
   *  span machines), ordered by rank: what node-shared arrays are made over (NodeShared). */
  MPI_Comm node_comm() const { return node_comm_; }
  /** The emulated network between nodes (TILECC_NET_LATENCY_US, TILECC_NET_GBPS; off unless
   *  set), read when the communicator is made. */
  const NetworkEmulation& network() const { return network_; }
  /** Whether a rank keeps the remote operand blocks it gets for its other tasks, once per
   *  contraction (TILECC_FETCH_ONCE `on`, the default, or `off`: every task gets its own, paper
   *  003's get/compute/accumulate baseline), read when the communicator is made. */
  bool fetch_once() const { return fetch_once_; }
  /** Whether WorkQ's workers hand their updates of remote blocks to the courier (Q2;
   *  TILECC_WORKQ_Q2 `on`, the default, or `off`: they send them themselves), read when the
   *  communicator is made. */
  bool courier_sends_updates() const { return courier_sends_updates_; }
  /** Whether WorkQ's workers switch roles, fetching their next task's blocks themselves when Q1
   *  is empty (TILECC_WORKQ_SWITCH `on`, or `off`, the default: they wait for the courier), read
   *  when the communicator is made. */
  bool workers_fetch_when_idle() const { return workers_fetch_when_idle_; }
  /** The window of the task counter, one 64-bit integer on rank 0. */
  MPI_Win counter_window() const { return counter_; }
  /** A number for the next window made (the same on every rank: windows are made collectively,
   *  in one order). */
  std::int64_t next_window_id() { return next_window_id_++; }
  /** Hands over a window its tensor no longer uses (local, thread-safe). */
  void retire(std::int64_t id, MPI_Win window);
  /** Frees, in the order they were made, the windows every rank has retired. Collective. */
  void free_retired();
  /** A barrier that also frees the retired windows when any rank has some (free_retired): one
   *  allreduce when none has, where a barrier and free_retired's two would be three. */
  void synchronise();

  void barrier() const;
  /** Element-wise sum over the ranks, in place. */
  void sum(std::span<double> values) const;
  double sum(double value) const;
  std::int64_t sum(std::int64_t value) const;
  /** Rank 0's `values` on every rank. */
  void broadcast(std::span<double> values) const;

  /** Whether MPI is initialised (and not finalised) with the thread support workers need. */
  static bool ready();

 private:
  /** node_ and nodes_ from the ranks sharing memory. */
  void find_nodes();
  MPI_Comm comm_ = MPI_COMM_NULL, node_comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, nodes_ = 1;
  bool virtual_nodes_ = false;
  std::vector<int> node_;
  NetworkEmulation network_;
  bool fetch_once_ = true, courier_sends_updates_ = true, workers_fetch_when_idle_ = false;
  MPI_Win counter_ = MPI_WIN_NULL;
  std::int64_t* counter_value_ = nullptr;
  std::int64_t next_window_id_ = 0;
  std::mutex retired_mutex_;
  std::map<std::int64_t, MPI_Win> retired_;  // by id
};

/** Reserves `bytes` of `budget` (null: nothing) for as long as the result lives, agreed by every
 *  rank of `comm` (null: this process alone) in one allreduce: when any rank's reservation is
 *  refused, every rank throws InputError, so that none goes on to a collective the others never
 *  reach. `what` names what the bytes are for. */
std::unique_ptr<BudgetShare> reserve_on_every_rank(const std::shared_ptr<MemoryBudget>& budget,
                                                   std::int64_t bytes, const char* what,
                                                   const Communicator* comm);

/** The tasks (indices into `costs`) this rank runs when the ranks share them by Longest
 *  Processing Time (LptPartition, a bin per rank). Every rank given the same costs makes the same
 *  split. Returned in index order (neighbouring tasks tend to read the same blocks). */
std::vector<task_id_t> rank_share(std::span<const double> costs, const Communicator& comm);

/**
 * The task counter of every rank (NXTVAL): MPI_Fetch_and_op on the communicator's counter window
 * on rank 0, as the TCE's NXTVAL is a Global Arrays counter. reset() is collective; fetch_add()
 * is thread-safe and one-sided.
 */
class GlobalCounter final : public TaskCounter {
 public:
  explicit GlobalCounter(std::shared_ptr<const Communicator> comm) : comm_(std::move(comm)) {}
  task_id_t fetch_add(task_id_t n) override;
  /** Every rank calls it before a run: back to 0 once no rank still fetches from the last run. */
  void reset() override;

 private:
  std::shared_ptr<const Communicator> comm_;
};

}  // namespace tilecc
