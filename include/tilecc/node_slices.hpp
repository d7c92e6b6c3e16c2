#pragma once
/** @file An array cut into slices spread over the nodes: each slice is held by one node, in the
 * memory of the node's first rank, which writes it and which the node's ranks read in place, and a
 * rank of another node gets it with one one-sided get from that first rank. What the occupied-loop
 * (T) kernels keep their 4-index inputs in, one slice per occupied orbital, so that no node holds
 * a whole one: a task gets the slices of its triple that its node does not hold. Each worker
 * keeps the last few slices it got (a step's tasks share their first orbital, and neighbouring
 * tasks their second). In one process, or with every rank on one node, every slice is held, and
 * this is a NodeShared array.
 *
 * The first ranks' memory is one MPI_Win_allocate window over every rank, which MPI places in
 * memory the node shares (MPI_Win_shared_query gives its ranks the first rank's address; its
 * gets between ranks of one machine are then copies, where a window over memory MPI did not
 * allocate needs the target rank to take part). Where MPI cannot share it, the node's other
 * ranks get its slices as they get other nodes'.
 *
 * Slices go to the nodes by weight (their size, unless given), largest first, each to the node
 * holding the least so far (LPT), the same on every rank: arrays made with the same weights put
 * their slice s on the same node.
 *
 * @code
 *   NodeSlices x(sizes, comm);               // collective
 *   for (std::size_t s = 0; s < x.slices(); ++s)
 *     if (x.writer() && x.held(s)) fill(x.writable(s));
 *   NodeSlices::publish({&x});               // every rank sees what the first ranks wrote
 *   const double* slice = x.read(s, worker); // in place, or got into the worker's cache
 * @endcode
 */
#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "tilecc/node_shared.hpp"

namespace tilecc {

class Communicator;

class NodeSlices {
 public:
  NodeSlices() = default;
  /** Slices of these sizes (doubles), zeroed, spread over the nodes of `comm` (null: all in this
   *  process) by `weights` (empty: the sizes), held against `budget` (null: uncounted) by the
   *  ranks that hold them. Collective: every rank makes the same slices in the same order. */
  NodeSlices(std::span<const std::size_t> sizes, std::shared_ptr<Communicator> comm,
             std::span<const std::size_t> weights = {},
             const std::shared_ptr<MemoryBudget>& budget = nullptr);
  ~NodeSlices();
  NodeSlices(NodeSlices&& other) noexcept;
  NodeSlices& operator=(NodeSlices&& other) noexcept;
  NodeSlices(const NodeSlices&) = delete;
  NodeSlices& operator=(const NodeSlices&) = delete;

  std::size_t slices() const { return size_.size(); }
  std::size_t slice_size(std::size_t s) const { return size_[s]; }
  /** Doubles of the largest slice. */
  std::size_t largest() const { return largest_; }
  /** Whether the slices are spread over several nodes (else every one is held). */
  bool spread() const { return win_ != MPI_WIN_NULL; }
  /** Whether this rank's node holds slice s. */
  bool held(std::size_t s) const;
  /** Whether this rank writes its node's slices (its node's first rank). */
  bool writer() const { return writer_; }
  /** Slice s, for its node's writer to fill. */
  double* writable(std::size_t s);
  /** Slice s: in place when this rank's node holds it, else from worker `worker`'s cache of the
   *  last `cached` slices it got, getting it there if it is not one of them. The pointer stays
   *  valid until the worker's `cached`-th read after it. Thread-safe across workers. */
  const double* read(std::size_t s, int worker) const;
  static constexpr int cached = 4;
  /** Once the first ranks have written their slices: every rank sees them (one barrier of the
   *  ranks that read them, MPI_Win_sync either side). Collective, with the same arrays. */
  static void publish(std::initializer_list<NodeSlices*> arrays);
  /** Bytes this rank holds: its node's slices on the writer, none on the others. */
  std::int64_t held_bytes() const;
  /** Bytes this rank has got with one-sided gets: other nodes' slices (and its own node's where
   *  MPI cannot share them in place). */
  std::int64_t fetched_bytes() const { return fetched_.load(std::memory_order_relaxed); }

 private:
  /** A worker's slices got from other nodes, the most recently used first. */
  struct Cache {
    std::vector<std::size_t> slice;
    std::vector<std::vector<double>> values;
  };
  Cache& cache_of(int worker) const;
  void release();
  std::shared_ptr<Communicator> comm_;
  std::vector<std::size_t> size_, offset_;  // each slice's offset within its node's array
  std::vector<int> node_;                   // the node holding each slice
  std::vector<int> first_rank_;             // each node's first rank, which exposes its array
  std::size_t largest_ = 0, mine_ = 0;      // doubles of this rank's node
  int my_node_ = 0;
  bool writer_ = true;
  NodeShared node_array_;                  // on one node
  std::unique_ptr<BudgetShare> reserved_;  // on several
  MPI_Win win_ = MPI_WIN_NULL;   // over several: each first rank's memory, its node's slices
  double* node_base_ = nullptr;  // this node's slices, read in place (null: got)
  std::int64_t window_id_ = 0;
  mutable std::atomic<std::int64_t> fetched_{0};
  mutable std::mutex caches_mutex_;
  mutable std::vector<std::unique_ptr<Cache>> caches_;  // by worker
};

}  // namespace tilecc
