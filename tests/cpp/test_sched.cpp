// Scheduling policies: every task runs exactly once under every policy, thread count and quantum;
// exact shared-counter counts; the cost order, LPT, guided chunks and block partitions against
// their guarantees; phase accounting adds up; bad options are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "tilecc/error.hpp"
#include "tilecc/exec.hpp"
#include "tilecc/workq.hpp"

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

TEST(Sched, StagedPoolsRunEveryTaskOnceAfterTheStagesBefore) {
  // Three stages; a task may start only once every task of the stages before it has finished.
  constexpr int per_stage = 100;
  const auto costs = random_costs(3 * per_stage, 11);
  std::vector<std::int32_t> stages(costs.size());
  for (std::size_t t = 0; t < stages.size(); ++t) stages[t] = static_cast<std::int32_t>(t % 3);
  for (const std::string& name : policy_names()) {
    if (name == "tce") continue;  // TCE runs one loop at a time, never a staged pool
    for (int threads : {1, 2, 3}) {
      Executor ex(threads, name, {}, SlowWorker::parse(threads > 1 ? "1:2" : ""));
      std::array<std::atomic<int>, 3> finished{};
      std::vector<std::atomic<int>> ran(costs.size());
      std::atomic<int> early{0};
      auto stages_before_done = [&](task_id_t t) {
        const auto s = static_cast<std::size_t>(stages[static_cast<std::size_t>(t)]);
        for (std::size_t e = 0; e < s; ++e)
          if (finished[e].load() < per_stage) return false;
        return true;
      };
      const Executor::Ready ready = stages_before_done;
      ex.run(
          {costs, {}, 1, stages},
          [&](task_id_t t, int) {
            if (!stages_before_done(t)) early.fetch_add(1);
            ran[static_cast<std::size_t>(t)].fetch_add(1);
            finished[static_cast<std::size_t>(stages[static_cast<std::size_t>(t)])].fetch_add(1);
          },
          &ready);
      for (std::size_t t = 0; t < costs.size(); ++t)
        ASSERT_EQ(ran[t].load(), 1) << name << " threads " << threads << " task " << t;
      EXPECT_EQ(early.load(), 0) << name << " threads " << threads;
    }
  }
}

TEST(Sched, StealTakesAnotherDequesEarlierStageBeforeItsOwnLaterOne) {
  // Worker 1 fetching alone: its own stage-0 tasks, then worker 0's stolen ones, all before any
  // task of stage 1 (which would have to wait for them), then every stage-1 task. Twice: an
  // executor starts its policy anew for every run, and what a worker saw of the deques in one run
  // (at its end, no earlier stage anywhere) must not keep it from stealing in the next.
  const std::vector<double> costs{8, 7, 6, 5, 4, 3, 2, 1};
  const std::vector<std::int32_t> stages{0, 0, 0, 0, 1, 1, 1, 1};
  const auto steal = make_policy("steal", {});
  for (int run = 0; run < 2; ++run) {
    steal->start({costs, {}, 1, stages}, 2);
    std::vector<task_id_t> fetched;
    for (std::span<const task_id_t> tasks; !(tasks = steal->next(1)).empty();)
      fetched.insert(fetched.end(), tasks.begin(), tasks.end());
    ASSERT_EQ(fetched.size(), costs.size()) << "run " << run;
    for (std::size_t i = 0; i < fetched.size(); ++i)
      EXPECT_EQ(stages[static_cast<std::size_t>(fetched[i])], i < 4 ? 0 : 1)
          << "run " << run << " fetch " << i;
    std::sort(fetched.begin(), fetched.end());
    EXPECT_TRUE(std::adjacent_find(fetched.begin(), fetched.end()) == fetched.end());
    EXPECT_TRUE(steal->next(0).empty());
  }
}

TEST(Sched, StaticLptRunsEachWorkersTasksInThePlansOrderStageByStage) {
  // LPT over (stage, decreasing cost) gives worker 0 tasks 1, 5, 0 and worker 1 tasks 3, 4, 2
  // (the last, tied at 10 against 10, to the lower worker); each then runs its own in index order
  // within each stage, not by cost.
  const std::vector<double> costs{1, 6, 2, 5, 3, 4};
  const std::vector<std::int32_t> stages{1, 0, 1, 0, 0, 1};
  const auto lpt = make_policy("static-lpt", {});
  lpt->start({costs, {}, 1, stages}, 2);
  const std::span<const task_id_t> first = lpt->next(0), second = lpt->next(1);
  EXPECT_EQ(std::vector<task_id_t>(first.begin(), first.end()), (std::vector<task_id_t>{1, 0, 5}));
  EXPECT_EQ(std::vector<task_id_t>(second.begin(), second.end()),
            (std::vector<task_id_t>{3, 4, 2}));
  EXPECT_TRUE(lpt->next(0).empty());
}

TEST(Sched, OneWorkerTakesTheTasksInTheListsOrderStageByStage) {
  // By decreasing cost within each stage the order would be 1, 3, 4, 5, 2, 0: with one worker
  // there is no balance to keep, and every policy but TCE's hands out the list's order.
  const std::vector<double> costs{1, 6, 2, 5, 3, 4};
  const std::vector<std::int32_t> stages{1, 0, 1, 0, 0, 1};
  for (const std::string& name : policy_names()) {
    if (name == "tce") continue;  // TCE's order is its loop's
    const auto policy = make_policy(name, {});
    policy->start({costs, {}, 1, stages}, 1);
    std::vector<task_id_t> fetched;
    for (std::span<const task_id_t> tasks; !(tasks = policy->next(0)).empty();)
      fetched.insert(fetched.end(), tasks.begin(), tasks.end());
    EXPECT_EQ(fetched, (std::vector<task_id_t>{1, 3, 4, 0, 2, 5})) << name;
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
    // buckets (one group): one fetch per guided chunk, plus one per worker.
    const std::vector<double> microseconds(100, 1e-6);
    DecreasingCostOrder order;
    std::vector<task_id_t> bounds;
    guided_chunks(microseconds, order.sort(microseconds), threads, 1, 20e-6, bounds);
    Executor buckets(threads, "buckets");
    EXPECT_EQ(buckets.run({microseconds}, [](task_id_t, int) {}).shared_calls,
              static_cast<std::int64_t>(bounds.size()) - 1 + threads);
    EXPECT_LT(bounds.size(), 50u);
  }
}

// The cost class DecreasingCostOrder documents, from frexp rather than from the bits: cost =
// 2^e (1 + f) with f in [0, 1) is in class 8 e + floor(8 f); zero and negative costs come last.
double cost_class(double cost) {
  if (!(cost > 0.0)) return -1e9;
  int exponent = 0;
  const double mantissa = std::frexp(cost, &exponent);  // in [0.5, 1)
  return 8.0 * (exponent - 1) + std::floor(8.0 * (2.0 * mantissa - 1.0));
}

TEST(Sched, DecreasingCostOrderSortsByStageThenCostClassThenIndex) {
  DecreasingCostOrder order;  // reused, as a policy keeps it
  for (unsigned seed = 0; seed < 20; ++seed) {
    // Rounded costs tie exactly; the others spread over many classes, some of them shared.
    std::vector<double> costs = random_costs(40 + seed * 7, seed);
    if (seed % 2 == 0)
      for (double& c : costs) c = std::round(c);
    costs[seed % costs.size()] = 0.0;
    std::vector<task_id_t> expected(costs.size());
    std::iota(expected.begin(), expected.end(), task_id_t{0});
    std::stable_sort(expected.begin(), expected.end(), [&](task_id_t x, task_id_t y) {
      return cost_class(costs[static_cast<std::size_t>(x)]) >
             cost_class(costs[static_cast<std::size_t>(y)]);
    });
    const auto sorted = order.sort(costs);
    EXPECT_EQ(std::vector<task_id_t>(sorted.begin(), sorted.end()), expected) << seed;
    // With stages, stage first: the same order within each stage.
    std::vector<std::int32_t> stages(costs.size());
    for (std::size_t t = 0; t < stages.size(); ++t)
      stages[t] = static_cast<std::int32_t>(t * 7 % 3);
    std::stable_sort(expected.begin(), expected.end(), [&](task_id_t x, task_id_t y) {
      return stages[static_cast<std::size_t>(x)] < stages[static_cast<std::size_t>(y)];
    });
    const auto staged = order.sort(costs, stages);
    EXPECT_EQ(std::vector<task_id_t>(staged.begin(), staged.end()), expected) << seed;
  }
  // A class spans at most a ratio of 9/8 (12.5%): costs 13% apart fall in different classes.
  const std::vector<double> close{1.0, 1.13, 1.13 * 1.13, 1.13 * 1.13 * 1.13};
  const auto sorted = order.sort(close);
  EXPECT_EQ(std::vector<task_id_t>(sorted.begin(), sorted.end()),
            (std::vector<task_id_t>{3, 2, 1, 0}));
  EXPECT_TRUE(order.sort({}).empty());
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
        // Each bin's tasks come by decreasing cost class.
        for (std::size_t i = 1; i < part.size(); ++i)
          EXPECT_GE(cost_class(costs[static_cast<std::size_t>(part[i - 1])]),
                    cost_class(costs[static_cast<std::size_t>(part[i])]));
      }
      EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
      const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
      const double largest = *std::max_element(costs.begin(), costs.end());
      // Greedy assignment to the least loaded bin: makespan <= total/m + (1 - 1/m) max.
      EXPECT_LE(makespan, total / bins + (1.0 - 1.0 / bins) * largest + 1e-9);
    }
  }
}

TEST(Sched, GuidedChunksAreTheLongestRunsWithinTheirLimit) {
  std::vector<task_id_t> bounds{9, 9};  // reused storage
  DecreasingCostOrder order;
  for (unsigned seed = 0; seed < 10; ++seed)
    for (int workers : {1, 2, 4})
      for (int fewest : {1, 3}) {
        // Microsecond-scale costs, in seconds, as measured task times are.
        std::vector<double> costs = random_costs(300 + seed * 41, seed);
        for (double& c : costs) c *= 1e-6;
        const double most = 20e-6;
        const auto sorted = order.sort(costs);
        guided_chunks(costs, sorted, workers, fewest, most, bounds);
        ASSERT_GE(bounds.size(), 2u);
        EXPECT_EQ(bounds.front(), 0);
        EXPECT_EQ(bounds.back(), static_cast<task_id_t>(sorted.size()));
        double left = std::accumulate(costs.begin(), costs.end(), 0.0);
        for (std::size_t c = 0; c + 1 < bounds.size(); ++c) {
          const auto first = static_cast<std::size_t>(bounds[c]);
          const auto end = static_cast<std::size_t>(bounds[c + 1]);
          ASSERT_LT(first, end) << "an empty chunk";
          double chunk = 0.0;
          for (std::size_t i = first; i < end; ++i)
            chunk += costs[static_cast<std::size_t>(sorted[i])];
          const double limit = std::min(most, left / (2.0 * workers));
          const std::size_t size = end - first;
          // Within the limit unless it holds only the fewest tasks a chunk must hold...
          if (size > static_cast<std::size_t>(fewest)) {
            EXPECT_LE(chunk, limit * (1 + 1e-12));
          }
          // ...and the longest such run: one task more would pass the limit.
          if (end < sorted.size()) {
            EXPECT_GE(size, static_cast<std::size_t>(fewest));
            EXPECT_GT(chunk + costs[static_cast<std::size_t>(sorted[end])], limit * (1 - 1e-12));
          }
          left -= chunk;
        }
      }
  // Many tasks of a microsecond: a fetch takes many of them, but the last chunks are single.
  const std::vector<double> tiny(1000, 1e-6);
  const auto sorted = order.sort(tiny);
  guided_chunks(tiny, sorted, 2, 1, 20e-6, bounds);
  EXPECT_LT(bounds.size(), 100u);
  EXPECT_EQ(bounds[bounds.size() - 1] - bounds[bounds.size() - 2], 1);
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

TEST(Sched, OneTaskRunsOnTheCallingThreadUnlessItsLoopOrASlowedWorkerNeedsThePolicy) {
  const std::vector<double> one{1.0};
  const std::thread::id caller = std::this_thread::get_id();
  for (const std::string& name : policy_names()) {
    Executor ex(2, name);
    std::thread::id ran_on;
    int worker = -1;
    const RunStats stats = ex.run({one}, [&](task_id_t, int w) {
      ran_on = std::this_thread::get_id();
      worker = w;
    });
    EXPECT_EQ(ran_on, caller) << name;
    EXPECT_EQ(worker, 0) << name;
    EXPECT_EQ(stats.shared_calls, 0) << name;
    ASSERT_EQ(stats.task_seconds.size(), 1u) << name;
    for (const PhaseSeconds& w : stats.phases) {
      const double total = std::accumulate(w.begin(), w.end(), 0.0);
      EXPECT_NEAR(total, stats.seconds, 1e-9 + 1e-9 * stats.seconds) << name;
    }
    // A task's exception reaches the caller, and the executor runs on afterwards.
    EXPECT_THROW(ex.run({one}, [](task_id_t, int) { throw InputError("the one task"); }),
                 InputError);
    int ran = 0;
    ex.run({one}, [&](task_id_t, int) { ++ran; });
    EXPECT_EQ(ran, 1) << name;
  }
  // TCE's loop with null tuples around the task goes through the policy: a fetch per tuple, plus
  // each worker's that finds none left.
  const std::vector<task_id_t> loop{-1, 0, -1};
  Executor tce(2, "tce");
  EXPECT_EQ(tce.run({one, loop}, [](task_id_t, int) {}).shared_calls, 3 + 2);
  // With a worker slowed, the policy decides who runs it: the counter is fetched from as always.
  Executor slowed(2, "counter", {}, SlowWorker::parse("0:2"));
  EXPECT_EQ(slowed.run({one}, [](task_id_t, int) {}).shared_calls, 1 + 2);
}

TEST(Sched, ForEachRunsEveryItemOnceOnTheWorkers) {
  Executor ex(2, "counter", {}, SlowWorker{});
  std::vector<std::atomic<int>> runs(1000);
  std::atomic<int> bad_worker{0};
  ex.for_each(1000, [&](std::int64_t i, int worker) {
    runs[static_cast<std::size_t>(i)].fetch_add(1);
    if (worker != 0 && worker != 1) bad_worker.fetch_add(1);
  });
  for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
  EXPECT_EQ(bad_worker.load(), 0);
  // An item's exception stops the loop and reaches the caller; the executor still works after.
  EXPECT_THROW(ex.for_each(100,
                           [](std::int64_t i, int) {
                             if (i == 37) throw InputError("item 37");
                           }),
               InputError);
  std::atomic<int> ran{0};
  ex.run({std::vector<double>(50, 1.0)}, [&](task_id_t, int) { ran.fetch_add(1); });
  ex.for_each(0, [&](std::int64_t, int) { ran.fetch_add(1000); });
  ex.for_each(1, [&](std::int64_t, int worker) { ran.fetch_add(worker == 0 ? 1 : 1000); });
  EXPECT_EQ(ran.load(), 51);
}

TEST(Sched, ForEachGivesEachWorkerItsContiguousShareFirst) {
  // Worker 0's share is items 0 and 1, worker 1's items 2 and 3. Items 0 and 1 wait until items 2
  // and 3 have started, and item 3 until item 1 has: neither worker can then finish its share
  // while the other's is untouched and take from it. (A wait ends after 10 s whatever happens,
  // so that a failure cannot hang.)
  Executor ex(2, "counter", {}, SlowWorker{});
  std::array<std::atomic<int>, 4> ran_by{-1, -1, -1, -1};
  std::array<std::atomic<bool>, 4> started{};
  auto wait_for = [&](std::size_t item) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!started[item] && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  };
  ex.for_each(4, [&](std::int64_t i, int worker) {
    const auto item = static_cast<std::size_t>(i);
    ran_by[item] = worker;
    started[item] = true;
    if (item < 2) wait_for(item + 2);
    if (item == 3) wait_for(1);
  });
  EXPECT_EQ(ran_by[0], 0);
  EXPECT_EQ(ran_by[1], 0);
  EXPECT_EQ(ran_by[2], 1);
  EXPECT_EQ(ran_by[3], 1);
}

TEST(Sched, WakingTheWorkersRunsNothingAndLeavesThemReadyForTheNextJob) {
  // Woken with no job to follow, the workers spin, then sleep again, running nothing meanwhile;
  // woken ahead of a job, they run it. Every job still runs each item once. On one thread there
  // are no workers to wake.
  Executor alone(1, "counter", {}, SlowWorker{});
  alone.wake();
  Executor ex(2, "counter", {}, SlowWorker{});
  const auto sleep_through_spin = std::chrono::duration<double>(2 * Executor::spin_seconds);
  std::atomic<int> ran{0};
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(sleep_through_spin);  // the workers sleep
    ex.wake();
    if (round == 1) std::this_thread::sleep_for(sleep_through_spin);  // and sleep again
    ex.for_each(10, [&](std::int64_t, int) { ran.fetch_add(1); });
  }
  EXPECT_EQ(ran.load(), 30);
}

}  // namespace
}  // namespace tilecc

namespace tilecc {
namespace {

// WorkQ's queue: each task runs once; its blocks are fetched either by the courier or by the
// worker that runs it (its first task, the bootstrap get; and, with role switching, any task it
// would otherwise wait for); with a slow courier and switching, the workers fetch most.
TEST(Workq, EveryTaskRunsOnceFetchedByTheCourierOrItsWorker) {
  const std::vector<double> costs(40, 1.0);
  for (const bool switching : {false, true}) {
    SCOPED_TRACE(switching);
    Executor ex(2, "counter");
    std::mutex mutex;
    std::vector<int> fetched(costs.size(), 0), ran(costs.size(), 0);
    Courier courier;
    courier.depth = 2;
    courier.workers_fetch_when_idle = switching;
    courier.fetch = [&](std::span<const task_id_t> tasks) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a slow network
      std::lock_guard lock(mutex);
      for (const task_id_t t : tasks) ++fetched[static_cast<std::size_t>(t)];
    };
    courier.release = [] {};
    const RunStats stats = run_workq(
        ex, {costs},
        [&](task_id_t t, int) {
          std::lock_guard lock(mutex);
          ++ran[static_cast<std::size_t>(t)];
        },
        courier);
    EXPECT_EQ(std::count(ran.begin(), ran.end(), 1), 40);
    const auto by_courier = std::count(fetched.begin(), fetched.end(), 1);
    EXPECT_EQ(std::count(fetched.begin(), fetched.end(), 0), stats.self_fetched_tasks);
    EXPECT_EQ(by_courier + stats.self_fetched_tasks, 40);
    if (switching)
      EXPECT_GT(stats.self_fetched_tasks, 2);  // more than the two bootstrap gets
    else
      EXPECT_LE(stats.self_fetched_tasks, 2);  // a bootstrap get per worker at most
  }
}

}  // namespace
}  // namespace tilecc
