// The distributed engine on several ranks (run by ctest under mpiexec -n 2 and -n 4): contractions
// through the `mpi` store equal the one-process result for every policy; every block is read
// through the store and counted by class (a rank's own blocks as views, others' by node); the
// counter policies pay exactly one counter fetch per task (TCE: per loop tuple) plus one per
// worker that finds the pool spent; and the (T) of a distributed kernel equals the one-process
// one.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>

#include "test_shapes.hpp"
#include "tilecc/blas.hpp"
#include "tilecc/error.hpp"
#include "tilecc/hypergraph.hpp"
#include "tilecc/mpi_store.hpp"
#include "tilecc/network.hpp"
#include "tilecc/node_slices.hpp"
#include "tilecc/ops.hpp"
#include "tilecc/runtime.hpp"

namespace tilecc {

// Virtual nodes of two ranks, so that both transfer classes across ranks occur. Made once, and
// freed (collectively) before MPI is finalised.
std::shared_ptr<Communicator>& world_slot() {
  static std::shared_ptr<Communicator> comm;
  return comm;
}

namespace {

using testing::dense;
using testing::shape;

std::shared_ptr<Communicator> world() {
  if (!world_slot()) world_slot() = std::make_shared<Communicator>(MPI_COMM_WORLD, 2);
  return world_slot();
}

SpacePtr orbitals(int n, extent_t tile, int irreps) { return testing::space(n, tile, irreps); }

// The ladder term C[ijab] = 0.5 T[ijcd] W[cdab] over two irreps, and its one-process result from
// the same values (fill_random is per block, whatever owns it).
struct Ladder {
  SpacePtr o = orbitals(12, 3, 2), v = orbitals(10, 4, 2);
  ShapePtr oovv = shape({o, o, v, v}), vvvv = shape({v, v, v, v});
  Operand c{oovv, {"i", "j", "a", "b"}, "C"}, a{oovv, {"i", "j", "c", "d"}, "T"},
      b{vvvv, {"c", "d", "a", "b"}, "W"};
  std::vector<double> expected;

  Ladder() {
    blas::ensure_loaded();
    BlockTensor t0(oovv), w0(vvvv), c0(oovv);
    fill_random(t0, 5);
    fill_random(w0, 6);
    Executor one(1);
    contract(ContractionPlan(c, a, b), 0.5, t0, w0, c0, one);
    expected = dense(c0);
  }
};

RuntimeOptions in_mpi_store(RuntimeOptions options) {
  options.store = "mpi";
  return options;
}

// The ladder's tensors and plan on a distributed runtime with these options.
struct DistributedLadder {
  Runtime runtime;
  BlockTensor t, w, c;
  PlannedContraction* planned;

  DistributedLadder(const Ladder& ladder, RuntimeOptions options)
      : runtime(in_mpi_store(std::move(options)), CostModel{}, world()),
        t(runtime.make_tensor(ladder.oovv)),
        w(runtime.make_tensor(ladder.vvvv)),
        c(runtime.make_tensor(ladder.oovv)),
        planned(&runtime.request(ladder.c, ladder.a, ladder.b)) {
    fill_random(t, 5);
    fill_random(w, 6);
    runtime.build_pending();
  }
  BatchRun run() {
    const std::vector<Contraction> items = {{planned, 0.5, &t, &w, &c}};
    return runtime.run(items);
  }
  /** C against the one-process result, read by every rank through its store. */
  void expect_result(const Ladder& ladder) const {
    const auto got = dense(c);
    ASSERT_EQ(got.size(), ladder.expected.size());
    for (std::size_t e = 0; e < got.size(); ++e) ASSERT_NEAR(got[e], ladder.expected[e], 1e-12);
  }
};

// An 8 x 8 matrix of 2 x 2 tiles, and a tensor of that shape spread over the ranks by hash.
ShapePtr square_shape() {
  auto o = orbitals(8, 2, 1);
  return shape({o, o});
}

BlockTensor distributed(ShapePtr shape) {
  StoreResources resources;
  resources.comm = world();
  return BlockTensor(std::move(shape), "mpi", resources);
}

TEST(Mpi, CommunicatorSeesRanksAndVirtualNodes) {
  const Communicator& comm = *world();
  EXPECT_GE(comm.size(), 2);
  EXPECT_EQ(comm.nodes(), comm.size() / 2);
  EXPECT_TRUE(comm.same_node(0, 1));
  if (comm.size() >= 3) {
    EXPECT_FALSE(comm.same_node(1, 2));
  }
  EXPECT_DOUBLE_EQ(comm.sum(1.0), comm.size());
}

TEST(Mpi, ContractionsMatchOneProcessUnderEveryPolicy) {
  const Ladder ladder;
  for (const std::string& policy : policy_names()) {
    SCOPED_TRACE(policy);
    RuntimeOptions options;
    options.threads = 2;
    options.policy = policy;
    DistributedLadder job(ladder, options);
    const BatchRun run = job.run();
    job.expect_result(ladder);
    // Every task ran somewhere, and every rank knows every task's time.
    for (const double s : run.items[0].task_seconds) EXPECT_GT(s, 0.0);
    const ContractionPlan& plan = job.planned->plan();
    const auto tasks = static_cast<std::int64_t>(plan.tasks().size());
    const std::int64_t fetches = world()->sum(run.run.shared_calls);
    const std::int64_t workers = static_cast<std::int64_t>(world()->size()) * options.threads;
    if (policy == "counter" && tasks > 1) {
      EXPECT_EQ(fetches, tasks + workers);
    } else if (policy == "tce") {
      EXPECT_EQ(fetches, static_cast<std::int64_t>(plan.loop().size()) + workers);
    }
  }
}

TEST(Mpi, PlacedTasksRunOnTheirRanksUnderEveryPolicy) {
  const Ladder ladder;
  for (const std::string& policy : policy_names()) {
    SCOPED_TRACE(policy);
    RuntimeOptions options;
    options.threads = 2;
    options.policy = policy;
    DistributedLadder job(ladder, options);
    // Every third task on the last rank, the others spread in turn: not any policy's own split.
    const auto tasks = job.planned->plan().tasks().size();
    std::vector<int> placement(tasks);
    for (std::size_t task = 0; task < tasks; ++task)
      placement[task] = task % 3 == 0
                            ? world()->size() - 1
                            : static_cast<int>(task % static_cast<std::size_t>(world()->size()));
    job.planned->schedule().set_placement(placement);
    const BatchRun run = job.run();
    EXPECT_EQ(run.run.tasks, std::count(placement.begin(), placement.end(), world()->rank()));
    job.expect_result(ladder);
  }
  // A placement of the wrong length, or onto a rank that does not exist, is refused.
  DistributedLadder job(ladder, RuntimeOptions{});
  EXPECT_THROW(job.planned->schedule().set_placement({0}), InputError);
  EXPECT_THROW(job.planned->schedule().set_placement(
                   std::vector<int>(job.planned->plan().tasks().size(), -1)),
               InputError);
}

// WorkQ on `threads` workers per rank, `depth` tasks ahead, each rank running its LPT share.
RuntimeOptions workq_options(int threads, int depth) {
  RuntimeOptions options;
  options.threads = threads;
  options.policy = "static-lpt";
  options.workq_depth = depth;
  return options;
}

// Per task of the plan, whether it is this rank's (its LPT share, as static-lpt runs it).
std::vector<char> this_ranks_tasks(const ContractionPlan& plan) {
  std::vector<char> mine(plan.tasks().size(), 0);
  for (const task_id_t task : rank_share(plan.modelled_seconds(), *world()))
    mine[static_cast<std::size_t>(task)] = 1;
  return mine;
}

// Bytes a store's counter saw move between ranks (within a node or between nodes).
std::int64_t between_ranks(const TransferCounter& counter) {
  const auto totals = counter.totals();
  return totals.bytes[static_cast<std::size_t>(Transfer::intra_node)] +
         totals.bytes[static_cast<std::size_t>(Transfer::inter_node)];
}

TEST(Mpi, WorkqFetchesEachRemoteBlockOnceAndGivesTheSameResult) {
  const Ladder ladder;
  for (const int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    DistributedLadder job(ladder, workq_options(threads, 3));
    const ContractionPlan& plan = job.planned->plan();
    // This rank's tasks and the distinct remote blocks they read.
    const std::vector<char> in_share = this_ranks_tasks(plan);
    std::set<std::pair<int, slot_t>> remote;
    const auto& t_store = dynamic_cast<const MpiStore&>(job.t.store());
    const auto& w_store = dynamic_cast<const MpiStore&>(job.w.store());
    for_each_task_block(plan, [&](task_id_t task, TaskBlockHypergraph::Tensor tensor, slot_t s) {
      if (!in_share[static_cast<std::size_t>(task)] || tensor == TaskBlockHypergraph::Tensor::c)
        return;
      const MpiStore& store = tensor == TaskBlockHypergraph::Tensor::a ? t_store : w_store;
      if (store.owner(s) != world()->rank()) remote.insert({static_cast<int>(tensor), s});
    });
    std::int64_t expected_bytes = 0;
    for (const auto& [tensor, s] : remote)
      expected_bytes += (tensor == 0 ? ladder.oovv : ladder.vvvv)->block_size(s) * 8;
    job.t.store().transfers().reset();
    job.w.store().transfers().reset();
    job.run();
    const std::int64_t fetched =
        between_ranks(job.t.store().transfers()) + between_ranks(job.w.store().transfers());
    EXPECT_EQ(fetched, expected_bytes);  // each remote block once: the courier's, kept for the run
    job.expect_result(ladder);
  }
}

TEST(Mpi, WorkqWorkersHandTheirRemoteUpdatesToTheCourier) {
  const Ladder ladder;
  for (const int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    DistributedLadder job(ladder, workq_options(threads, 2));
    const ContractionPlan& plan = job.planned->plan();
    // Q2: every update of a block another rank owns, by the rank's tasks, goes through the
    // courier; the rank's own blocks are updated by the workers.
    const std::vector<char> in_share = this_ranks_tasks(plan);
    const auto& c_store = dynamic_cast<const MpiStore&>(job.c.store());
    std::int64_t remote_updates = 0, remote_bytes = 0;
    for_each_task_block(plan, [&](task_id_t task, TaskBlockHypergraph::Tensor tensor, slot_t s) {
      if (in_share[static_cast<std::size_t>(task)] && tensor == TaskBlockHypergraph::Tensor::c &&
          c_store.owner(s) != world()->rank()) {
        ++remote_updates;
        remote_bytes += ladder.oovv->block_size(s) * 8;
      }
    });
    // The case is one that sends updates.
    ASSERT_GT(world()->sum(static_cast<double>(remote_updates)), 0.0);
    job.c.store().transfers().reset();
    const BatchRun run = job.run();
    EXPECT_EQ(run.run.posted_updates, remote_updates);
    EXPECT_EQ(between_ranks(job.c.store().transfers()), remote_bytes);
    job.expect_result(ladder);
  }
}

TEST(Mpi, WorkqCachesOnlyWhatTheMemoryBudgetHasRoomFor) {
  const Ladder ladder;
  RuntimeOptions options;
  options.policy = "static-lpt";
  options.workq_depth = 4;
  // The tensors' shares, measured, then a budget with room for the largest and nothing more:
  // the courier caches only what fits beside a rank's share (nothing on the rank with the most),
  // the tasks fetch the rest themselves, and the result is the same.
  std::int64_t tensors = 0;
  {
    DistributedLadder probe(ladder, options);
    tensors = probe.runtime.memory().used();
  }
  std::int64_t largest = 0;
  MPI_Allreduce(&tensors, &largest, 1, MPI_INT64_T, MPI_MAX, world()->comm());
  options.memory_budget_bytes = largest;
  DistributedLadder job(ladder, options);
  job.run();
  job.expect_result(ladder);
  EXPECT_LE(job.runtime.memory().high_water(), options.memory_budget_bytes);
  EXPECT_EQ(job.runtime.memory().used(), tensors);  // what the cache held is given back
}

TEST(Mpi, NetworkEmulationIsReadFromTheEnvironmentOrRefused) {
  EXPECT_EQ(NetworkEmulation().describe(), "off");
  EXPECT_EQ(NetworkEmulation(20e-6, 10e9).describe(),
            "20 us latency, 10 GB/s between nodes (emulated)");
  setenv("TILECC_NET_LATENCY_US", "-3", 1);
  EXPECT_THROW(NetworkEmulation::from_environment(), InputError);
  setenv("TILECC_NET_LATENCY_US", "fast", 1);
  EXPECT_THROW(NetworkEmulation::from_environment(), InputError);
  setenv("TILECC_NET_LATENCY_US", "5", 1);
  setenv("TILECC_NET_GBPS", "nan", 1);
  EXPECT_THROW(NetworkEmulation::from_environment(), InputError);
  unsetenv("TILECC_NET_GBPS");
  EXPECT_TRUE(NetworkEmulation::from_environment().on());
  unsetenv("TILECC_NET_LATENCY_US");
  EXPECT_FALSE(NetworkEmulation::from_environment().on());
}

TEST(Mpi, BlocksAreReadThroughTheStoreAndCountedByClass) {
  const ShapePtr oo = square_shape();
  BlockTensor t = distributed(oo);
  fill(t, 2.0);
  const auto& store = dynamic_cast<const MpiStore&>(t.store());
  t.store().transfers().reset();
  const auto values = dense(t);  // reads all blocks: own ones as views, the others' by node
  for (const double x : values) EXPECT_EQ(x, 2.0);
  std::int64_t own = 0, near = 0, far = 0;
  for (slot_t s = 0; s < oo->num_blocks(); ++s) {
    const extent_t bytes = oo->block_size(s) * 8;
    const int owner = store.owner(s);
    if (owner == world()->rank())
      own += bytes;
    else if (world()->same_node(owner, world()->rank()))
      near += bytes;
    else
      far += bytes;
  }
  const auto totals = t.store().transfers().totals();
  EXPECT_EQ(totals.bytes[static_cast<std::size_t>(Transfer::view)], own);
  EXPECT_EQ(totals.bytes[static_cast<std::size_t>(Transfer::intra_node)], near);
  EXPECT_EQ(totals.bytes[static_cast<std::size_t>(Transfer::inter_node)], far);
  // Another rank's block is not this rank's to change.
  for (slot_t s = 0; s < oo->num_blocks(); ++s) {
    if (!t.store().owns(s)) {
      EXPECT_THROW(t.block(s), InputError);
    }
  }
}

TEST(Mpi, RedistributedBlocksKeepTheirValuesOnTheirNewOwners) {
  const ShapePtr oo = square_shape();
  BlockTensor t = distributed(oo);
  fill_random(t, 7);
  const auto before = dense(t);
  // Every block to the rank after its hash owner: each rank gets all of its new blocks from
  // another rank.
  std::vector<int> owners = t.store().owners();
  for (int& o : owners) o = (o + 1) % world()->size();
  t.redistribute(owners);
  EXPECT_EQ(t.store().owners(), owners);
  EXPECT_EQ(dense(t), before);
  std::int64_t got = 0;
  for (slot_t s = 0; s < oo->num_blocks(); ++s)
    if (owners[static_cast<std::size_t>(s)] == world()->rank()) got += oo->block_size(s) * 8;
  EXPECT_GT(world()->sum(static_cast<double>(got)), 0.0);
  // An owner map of the wrong length, or naming a rank the job does not have, is refused.
  EXPECT_THROW(t.redistribute(std::vector<int>{0}), InputError);
  std::vector<int> beyond(owners.size(), world()->size());
  EXPECT_THROW(t.redistribute(beyond), InputError);
  EXPECT_EQ(dense(t), before);
}

TEST(Mpi, TheNodesOtherRanksBlocksAreReadInPlace) {
  // Where MPI puts a window in memory the node shares (it does here), a block another rank of
  // this node owns is read where it lives: two fetches into two buffers give one address. A
  // block of another node is got into the buffer. Both hold the owner's values.
  const ShapePtr oo = square_shape();
  BlockTensor t = distributed(oo);
  fill_random(t, 3);
  t.store().complete_writes();
  BlockTensor reference(oo);
  fill_random(reference, 3);
  const auto& store = dynamic_cast<const MpiStore&>(t.store());
  int in_place = 0;
  for (slot_t b = 0; b < oo->num_blocks(); ++b) {
    const int owner = store.owner(b);
    if (owner == world()->rank()) continue;
    ScratchBuffer one, two;
    const double* first = store.fetch(b, one);
    const double* second = store.fetch(b, two);
    const bool same_node = world()->same_node(owner, world()->rank());
    EXPECT_EQ(first == second, same_node);
    in_place += same_node ? 1 : 0;
    for (extent_t e = 0; e < oo->block_size(b); ++e) ASSERT_EQ(first[e], reference.block(b)[e]);
  }
  EXPECT_GT(world()->sum(static_cast<double>(in_place)), 0.0);
}

TEST(Mpi, NodeSlicesAreSpreadOverTheNodesAndReadFromAnyRank) {
  // Slices by LPT over the nodes: on two, 7 and 3 doubles on node 0, 5, 4 and 2 on node 1; on
  // one, every slice on it.
  const std::vector<std::size_t> sizes = {5, 3, 7, 2, 4};
  NodeSlices x(sizes, world());
  EXPECT_EQ(x.spread(), world()->nodes() > 1);
  for (std::size_t s = 0; s < x.slices(); ++s)
    if (x.writer() && x.held(s))
      for (std::size_t e = 0; e < sizes[s]; ++e) x.writable(s)[e] = 100.0 * s + e;
  NodeSlices::publish({&x});
  std::size_t held = 0;
  std::int64_t elsewhere = 0;
  for (std::size_t s = 0; s < x.slices(); ++s) {
    const double* got = x.read(s, 0);
    for (std::size_t e = 0; e < sizes[s]; ++e) ASSERT_EQ(got[e], 100.0 * s + e);
    if (x.held(s))
      held += sizes[s];
    else
      elsewhere += static_cast<std::int64_t>(sizes[s] * 8);
  }
  const int node = world()->node_of(world()->rank());
  EXPECT_EQ(held, world()->nodes() == 1 ? 21u : node == 0 ? 10u : 11u);
  EXPECT_EQ(x.fetched_bytes(), elsewhere);
  // A worker keeps the slices it got (at most NodeSlices::cached, more than the three or fewer
  // any node lacks here): read again, they move nothing; another worker gets its own.
  for (std::size_t s = 0; s < x.slices(); ++s) ASSERT_EQ(x.read(s, 0)[0], 100.0 * s);
  EXPECT_EQ(x.fetched_bytes(), elsewhere);
  for (std::size_t s = 0; s < x.slices(); ++s) ASSERT_EQ(x.read(s, 1)[0], 100.0 * s);
  EXPECT_EQ(x.fetched_bytes(), 2 * elsewhere);
  // Twelve slices of one double: on two nodes, six elsewhere, more than a worker keeps; read in
  // turn twice, the least recently used makes room each time, and every read gets its slice.
  NodeSlices many(std::vector<std::size_t>(12, 1), world());
  for (std::size_t s = 0; s < many.slices(); ++s)
    if (many.writer() && many.held(s)) many.writable(s)[0] = static_cast<double>(s);
  NodeSlices::publish({&many});
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t s = 0; s < many.slices(); ++s) ASSERT_EQ(many.read(s, 0)[0], s);
  EXPECT_EQ(many.fetched_bytes(), many.spread() ? 2 * 6 * 8 : 0);
  EXPECT_EQ(x.held_bytes(), x.writer() ? static_cast<std::int64_t>(held * 8) : 0);
  // Only the node's first rank writes, and only its node's slices.
  if (!x.writer() || x.spread()) {
    std::size_t other = 0;
    while (x.writer() && x.held(other)) ++other;
    EXPECT_THROW(x.writable(other), InputError);
  }
}

TEST(Mpi, NodeArraysOverTheBudgetAreRefusedOnEveryRank) {
  // Rank 0, its node's first rank, has a budget of 100 bytes, less than its node's share of the
  // array; the others have none: every rank refuses, none waits in a collective the others
  // never reach. With room, each node's first rank holds its share against the budget until
  // the array goes.
  const bool tight = world()->rank() == 0;
  auto budget = std::make_shared<MemoryBudget>(tight ? 100 : 0);
  const std::vector<std::size_t> sizes(8, 100);
  EXPECT_THROW(NodeSlices(sizes, world(), {}, budget), InputError);
  EXPECT_EQ(budget->used(), 0);
  auto roomy = std::make_shared<MemoryBudget>(1 << 20);
  {
    NodeSlices x(sizes, world(), {}, roomy);
    EXPECT_EQ(roomy->used(), x.held_bytes());
    EXPECT_EQ(world()->sum(static_cast<double>(x.held_bytes())), 8.0 * 800);
  }
  EXPECT_EQ(roomy->used(), 0);
}

}  // namespace
}  // namespace tilecc

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Rank 0 reports every test; the others only their failures, named by rank.
  if (rank != 0) GTEST_FLAG_SET(brief, true);
  const int failed = RUN_ALL_TESTS();
  if (failed != 0 && rank != 0) std::fprintf(stderr, "tests failed on rank %d\n", rank);
  tilecc::world_slot().reset();
  int any = failed;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
