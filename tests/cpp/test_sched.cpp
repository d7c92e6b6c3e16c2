// Scheduling policies: every task runs exactly once under every policy, thread count and quantum;
// exact shared-counter counts; the cost order, LPT and block partitions against their guarantees;
// phase accounting adds up; bad options are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <random>

#include "tilecc/error.hpp"
#include "tilecc/exec.hpp"

namespace tilecc {
namespace {

std::vector<double> random_costs(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::lognormal_distribution<double> cost(0.0, 1.5);
  std::vector<double> c(n);
  for (double& x : c) x = cost(rng);
  return c;
}

TEST(Sched, EveryPolicyRunsEveryTaskOnce) {
  const auto costs = random_costs(997, 7);
  // A TCE loop with null tuples between the tasks.
  std::vector<task_id_t> loop;
  for (task_id_t t = 0; t < 997; ++t) {
    if (t % 3 == 0) loop.push_back(-1);
    loop.push_back(t);
  }
  for (const std::string& name : policy_names())
    for (int threads : {1, 2, 3})
      for (int quantum : {1, 4}) {
        PolicyOptions options;
        options.quantum = quantum;
        options.group_size = 2;
        Executor ex(threads, name, options, SlowWorker::parse(threads > 1 ? "1:2" : ""));
        std::vector<std::atomic<int>> ran(costs.size());
        const RunStats stats = ex.run({costs, loop}, [&](task_id_t t, int) {
          ran[static_cast<std::size_t>(t)].fetch_add(1);
        });
        for (std::size_t t = 0; t < costs.size(); ++t)
          ASSERT_EQ(ran[t].load(), 1) << name << " threads " << threads << " task " << t;
        // Every worker's phases cover the run exactly.
        for (const PhaseSeconds& w : stats.phases) {
          const double total = std::accumulate(w.begin(), w.end(), 0.0);
          EXPECT_NEAR(total, stats.seconds, 1e-9 + 1e-9 * stats.seconds) << name;
        }
      }
}

TEST(Sched, SharedCounterCallsAreExact) {
  const std::vector<double> costs(100, 1.0);
  std::vector<task_id_t> loop;
  for (task_id_t t = 0; t < 100; ++t) loop.insert(loop.end(), {-1, -1, t});
  for (int threads : {1, 2}) {
    // TCE: one fetch per loop tuple, null or not, plus each worker's fetch that finds none left.
    Executor tce(threads, "tce");
    EXPECT_EQ(tce.run({costs, loop}, [](task_id_t, int) {}).shared_calls, 300 + threads);
    // counter with quantum 7: ceil(100 / 7) fetches that find tasks, plus one per worker.
    PolicyOptions q7;
    q7.quantum = 7;
    Executor counter(threads, "counter", q7);
    EXPECT_EQ(counter.run({costs}, [](task_id_t, int) {}).shared_calls, 15 + threads);
    Executor lpt(threads, "static-lpt");
    EXPECT_EQ(lpt.run({costs}, [](task_id_t, int) {}).shared_calls, 0);
  }
}

TEST(Sched, DecreasingCostOrderIsThatOfAStableSort) {
  std::vector<task_id_t> order{5, 6, 7};  // reused storage, as a policy keeps it
  for (unsigned seed = 0; seed < 20; ++seed) {
    // Costs from a few values, so that most tasks tie with others.
    std::vector<double> costs = random_costs(40 + seed * 7, seed);
    for (double& c : costs) c = std::round(c);
    std::vector<task_id_t> expected(costs.size());
    std::iota(expected.begin(), expected.end(), task_id_t{0});
    std::stable_sort(expected.begin(), expected.end(), [&](task_id_t x, task_id_t y) {
      return costs[static_cast<std::size_t>(x)] > costs[static_cast<std::size_t>(y)];
    });
    sort_by_decreasing_cost(costs, order);
    EXPECT_EQ(order, expected);
  }
}

TEST(Sched, LptMeetsTheListSchedulingBound) {
  LptPartition partition;  // reused, and shrunk from 8 bins to 2, as a policy reuses it
  for (unsigned seed = 0; seed < 20; ++seed) {
    const auto costs = random_costs(50 + seed * 13, seed);
    for (int bins : {2, 3, 8}) {
      const std::vector<int> capacities(static_cast<std::size_t>(bins), 1);
      partition.assign(costs, capacities);
      ASSERT_EQ(partition.bins(), capacities.size());
      std::vector<int> seen(costs.size(), 0);
      double makespan = 0.0;
      for (std::size_t b = 0; b < partition.bins(); ++b) {
        const auto part = partition.bin(b);
        double load = 0.0;
        for (task_id_t t : part) {
          ++seen[static_cast<std::size_t>(t)];
          load += costs[static_cast<std::size_t>(t)];
        }
        makespan = std::max(makespan, load);
        // Each bin's tasks come largest first.
        for (std::size_t i = 1; i < part.size(); ++i)
          EXPECT_GE(costs[static_cast<std::size_t>(part[i - 1])],
                    costs[static_cast<std::size_t>(part[i])]);
      }
      EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
      const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
      const double largest = *std::max_element(costs.begin(), costs.end());
      // Greedy assignment to the least loaded bin: makespan <= total/m + (1 - 1/m) max.
      EXPECT_LE(makespan, total / bins + (1.0 - 1.0 / bins) * largest + 1e-9);
    }
  }
}

TEST(Sched, StaticBlockGivesContiguousBalancedRuns) {
  const auto costs = random_costs(500, 3);
  const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
  const double largest = *std::max_element(costs.begin(), costs.end());
  auto policy = make_policy("static-block", {});
  policy->start({costs}, 4);
  task_id_t expected = 0;
  for (int w = 0; w < 4; ++w) {
    const auto mine = policy->next(w);
    double load = 0.0;
    for (task_id_t t : mine) {
      EXPECT_EQ(t, expected++);
      load += costs[static_cast<std::size_t>(t)];
    }
    EXPECT_LE(load, total / 4 + largest);
    EXPECT_TRUE(policy->next(w).empty());
  }
  EXPECT_EQ(expected, 500);
}

TEST(Sched, BadOptionsAreRefused) {
  PolicyOptions zero_quantum;
  zero_quantum.quantum = 0;
  EXPECT_THROW(make_policy("counter", zero_quantum), InputError);
  PolicyOptions negative_group;
  negative_group.group_size = -1;
  EXPECT_THROW(make_policy("buckets", negative_group), InputError);
  try {
    make_policy("fifo", {});
    FAIL() << "an unknown policy was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("static-lpt"), std::string::npos) << e.what();
  }
  for (const char* bad : {"x", "0", "0:", ":3", "-1:2", "0:0.5", "0:3x", "1.5:2"})
    EXPECT_THROW(SlowWorker::parse(bad), InputError) << bad;
  const SlowWorker ok = SlowWorker::parse("1:2.5");
  EXPECT_EQ(ok.worker, 1);
  EXPECT_DOUBLE_EQ(ok.factor, 2.5);
}

}  // namespace
}  // namespace tilecc
