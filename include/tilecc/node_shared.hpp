#pragma once
/** @file An array of doubles that the ranks of a node share: one copy per node, in an MPI-3 shared
 * window over the node's ranks, written by the node's first rank and read by all of them; in one
 * process, an ordinary array. What the (T) kernels keep their repacked inputs in, so that a node
 * holds them once however many ranks it runs. */
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

namespace tilecc {

class Communicator;
class BudgetShare;
class MemoryBudget;

class NodeShared {
 public:
  NodeShared() = default;
  /** `n` zeroed doubles, one copy per node of `comm` (null or a single rank: this process's own),
   *  held against `budget` (null: uncounted) by the rank that holds them. Collective: every rank
   *  of `comm` makes the same arrays in the same order. */
  NodeShared(std::size_t n, std::shared_ptr<Communicator> comm,
             const std::shared_ptr<MemoryBudget>& budget = nullptr);
  ~NodeShared();
  NodeShared(NodeShared&& other) noexcept;
  NodeShared& operator=(NodeShared&& other) noexcept;
  NodeShared(const NodeShared&) = delete;
  NodeShared& operator=(const NodeShared&) = delete;

  double* data() { return data_; }
  const double* data() const { return data_; }
  std::size_t size() const { return size_; }
  double& operator[](std::size_t i) { return data_[i]; }
  double operator[](std::size_t i) const { return data_[i]; }
  /** Whether this rank writes the array (the node's first rank; every rank of its own node). */
  bool writer() const { return writer_; }
  /** Whether this rank writes the arrays made on `comm` (before any is made). */
  static bool writes_on(const Communicator* comm);
  /** Bytes this rank holds of it: the whole array on the writer, none on the others. */
  std::int64_t held_bytes() const {
    return writer_ ? static_cast<std::int64_t>(size_ * sizeof(double)) : 0;
  }
  /** Once their writer has written them: every rank of the node sees what it wrote (one barrier
   *  of the node's ranks, which all call it with the same arrays). */
  static void publish(std::initializer_list<NodeShared*> arrays);

 private:
  void release();
  std::shared_ptr<Communicator> comm_;
  std::unique_ptr<BudgetShare> reserved_;
  std::vector<double> own_;  // in one process
  MPI_Win win_ = MPI_WIN_NULL;
  std::int64_t window_id_ = 0;
  double* data_ = nullptr;
  std::size_t size_ = 0;
  bool writer_ = true;
};

}  // namespace tilecc
