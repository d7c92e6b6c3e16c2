// The runtime object: its plan cache (one plan per contraction, reused), plans built together,
// batches run with corrected schedules that refinement and the corrector learn from, totals that
// add up, observers told, options refused, and two runtimes in one process sharing nothing.
#include <gtest/gtest.h>

#include <numeric>
#include <optional>

#include "test_shapes.hpp"
#include "tilecc/blas.hpp"
#include "tilecc/error.hpp"
#include "tilecc/ops.hpp"
#include "tilecc/runtime.hpp"

namespace tilecc {
namespace {

using testing::dense;
using testing::shape;
using testing::space;

struct Counting final : RuntimeObserver {
  int built = 0, batches = 0;
  void plans_built(std::span<const PlannedContraction* const> plans) override {
    built += static_cast<int>(plans.size());
  }
  void batch_ran(std::span<const Contraction> items, const BatchRun& run) override {
    ++batches;
    EXPECT_EQ(items.size(), run.items.size());
  }
};

TEST(Runtime, CachesPlansRunsBatchesAndLearnsFromThem) {
  blas::ensure_loaded();
  auto o = space(12, 2, 2), v = space(8, 4, 2);
  auto oovv = shape({o, o, v, v}), vvvv = shape({v, v, v, v});
  BlockTensor t(oovv), w(vvvv), c(oovv), expected(oovv);
  fill_random(t, 1);
  fill_random(w, 2);
  const Operand oc{oovv, {"i", "j", "a", "b"}, "C"}, oa{oovv, {"i", "j", "c", "d"}, "T"},
      ob{vvvv, {"c", "d", "a", "b"}, "W"}, ob2{vvvv, {"a", "b", "c", "d"}, "W"};

  RuntimeOptions options;
  options.threads = 2;
  options.policy = "static-lpt";
  Runtime runtime(options, CostModel{});
  auto observer = std::make_shared<Counting>();
  runtime.add_observer(observer);

  PlannedContraction& first = runtime.request(oc, oa, ob);
  PlannedContraction& second = runtime.request(oc, oa, ob2);
  EXPECT_EQ(&runtime.request(oc, oa, ob), &first);  // cached by shapes and labels
  EXPECT_FALSE(first.built());
  EXPECT_THROW(first.plan(), InputError);
  runtime.build_pending();
  ASSERT_TRUE(first.built() && second.built());
  EXPECT_EQ(observer->built, 2);
  EXPECT_EQ(runtime.stats().plans_built, 2);
  EXPECT_EQ(first.schedule().policy_name(), "static-lpt");
  EXPECT_GT(first.inspector_charged() + second.inspector_charged(), 0.0);
  EXPECT_DOUBLE_EQ(first.inspector_charged() + second.inspector_charged(),
                   runtime.stats().inspector_seconds);

  // Two runs of both: the same sums as contract() one after another, task times kept for
  // refinement, and the corrector taught by every task.
  Executor one(1);
  for (int run = 0; run < 2; ++run) {
    const std::vector<Contraction> items = {{&first, 1.0, &t, &w, &c}, {&second, 0.5, &t, &w, &c}};
    const BatchRun record = runtime.run(items);
    ASSERT_EQ(record.items.size(), 2u);
    contract(first.plan(), 1.0, t, w, expected, one);
    contract(second.plan(), 0.5, t, w, expected, one);
    EXPECT_EQ(dense(c), dense(expected));
    EXPECT_EQ(record.items[0].task_seconds, first.schedule().measured_seconds());
    EXPECT_EQ(record.items[0].model_error.tasks,
              static_cast<std::int64_t>(first.plan().tasks().size()));
  }
  EXPECT_EQ(observer->batches, 2);
  const RuntimeStats& stats = runtime.stats();
  const auto tasks =
      static_cast<std::int64_t>(first.plan().tasks().size() + second.plan().tasks().size());
  EXPECT_EQ(stats.contractions, 4);
  EXPECT_EQ(stats.tasks, 2 * tasks);
  EXPECT_EQ(runtime.corrector().tasks(), 2 * tasks);
  EXPECT_DOUBLE_EQ(stats.flops,
                   2 * (first.plan().executed_flops() + second.plan().executed_flops()));
  EXPECT_EQ(stats.plans_reused, 1);  // the repeated request
  runtime.request(oc, oa, ob);
  EXPECT_EQ(runtime.stats().plans_reused, 2);
  EXPECT_EQ(runtime.contractions().size(), 2u);

  // A second runtime shares nothing with the first: its own plans, corrector and statistics.
  Runtime other(options, CostModel{});
  PlannedContraction& mine = other.request(oc, oa, ob);
  EXPECT_NE(&mine, &first);
  EXPECT_EQ(other.corrector().tasks(), 0);
  EXPECT_EQ(other.stats().contractions, 0);
}

TEST(Runtime, DropsPendingPlansAndRefusesBadOptions) {
  auto o = space(6, 2, 1), v = space(8, 4, 1);
  auto oovv = shape({o, o, v, v}), vvvv = shape({v, v, v, v});
  Runtime runtime({}, CostModel{});
  runtime.request({oovv, {"i", "j", "a", "b"}, "C"}, {oovv, {"i", "j", "c", "d"}, "T"},
                  {vvvv, {"c", "d", "a", "q"}, "W"});  // 'q' is in no other operand
  EXPECT_EQ(runtime.pending(), 1u);
  EXPECT_THROW(runtime.build_pending(), InputError);
  EXPECT_EQ(runtime.pending(), 0u);
  EXPECT_TRUE(runtime.contractions().empty());

  RuntimeOptions bad;
  bad.store = "tape";
  try {
    Runtime r(bad, CostModel{});
    FAIL() << "an unknown store was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("registered stores are: copy, disk, memory, mpi, none."),
              std::string::npos)
        << e.what();
  }
  bad = {};
  bad.policy = "fifo";
  EXPECT_THROW(Runtime(bad, CostModel{}), InputError);
}

TEST(Runtime, TensorsHoldTheirBytesAgainstTheMemoryBudget) {
  // A tensor of 12 x 12 doubles (1152 bytes, padded to 64) fits a budget of 2000 bytes once; a
  // second is refused with the sentence that names the budget, and counts nothing; freeing the
  // first gives its bytes back.
  auto o = space(12, 4, 1);
  auto oo = shape({o, o});
  RuntimeOptions options;
  options.memory_budget_bytes = 2000;
  Runtime runtime(options, CostModel{});
  std::optional<BlockTensor> first(runtime.make_tensor(oo));
  const std::int64_t held = runtime.memory().used();
  EXPECT_GE(held, 12 * 12 * 8);
  try {
    runtime.make_tensor(oo);
    FAIL() << "a tensor over the budget was made";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("over the memory budget of"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(runtime.memory().used(), held);
  first.reset();
  EXPECT_EQ(runtime.memory().used(), 0);
  EXPECT_EQ(runtime.memory().high_water(), held);
  BlockTensor again = runtime.make_tensor(oo);  // fits once more
  EXPECT_EQ(runtime.memory().used(), held);
}

}  // namespace
}  // namespace tilecc
