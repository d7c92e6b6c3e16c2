// Contractions through plan + executor against naive loops over the dense tensors (one generic
// loop nest over every label value): the buffered output path at 1 and 2 threads, stacked tasks
// and the model's say over stacking, and slabs of single blocks on every output layout; and the
// plan's task prices against the same pricing written out afresh, and its corrected estimates
// against the model's predictions scaled and shifted; batches of contractions against the same
// contractions run one after another; plans built together on the workers against plans built
// one by one; labels of several letters against one-letter labels, and each fault of a
// contraction's labels against the sentence that names it.
#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>

#include "test_shapes.hpp"
#include "tilecc/blas.hpp"
#include "tilecc/contract.hpp"
#include "tilecc/error.hpp"
#include "tilecc/inspect.hpp"
#include "tilecc/ops.hpp"
#include "tilecc/sched.hpp"

namespace tilecc {
namespace {

using testing::dense;
using testing::shape;
using testing::space;

// A cost model shaped like the ones calibrated on x86 machines (a GEMM call costs a fixed
// overhead and packs its operands, a permutation streams its elements): the plan's stacking
// decisions follow it. CostModel{} has neither packing nor a realistic call cost.
CostModel measured_like_model() {
  CostModel model;
  model.gemm = {2e-7, 6.5e-11, 1e-9, 1e-9, 1e-9, 5e-9, 0.0, 2e-9};
  model.permute = {1e-7, 1.5e-9, 2e-9, 2.5e-9, 7e-9};
  return model;
}

// C[lc] += A[la] * B[lb] by loops over every label value, on dense row-major arrays; `extent`
// gives each label's extent.
std::vector<double> naive_contraction(const std::string& lc, const std::string& la,
                                      const std::string& lb, const std::map<char, int>& extent,
                                      const std::vector<double>& da,
                                      const std::vector<double>& db) {
  std::string labels;
  for (const auto& [label, e] : extent) labels += label;
  auto offset = [&](const std::string& of, const std::map<char, int>& at) {
    std::size_t o = 0;
    for (char l : of) o = o * static_cast<std::size_t>(extent.at(l)) + at.at(l);
    return o;
  };
  std::size_t size = 1;
  for (char l : lc) size *= static_cast<std::size_t>(extent.at(l));
  std::vector<double> dc(size, 0.0);
  std::map<char, int> at;
  for (char l : labels) at[l] = 0;
  for (;;) {
    dc[offset(lc, at)] += da[offset(la, at)] * db[offset(lb, at)];
    std::size_t q = labels.size();
    while (q > 0 && ++at[labels[q - 1]] == extent.at(labels[q - 1])) at[labels[--q]] = 0;
    if (q == 0) return dc;
  }
}

// The same products, pair by pair: the same A and B blocks, with the same scale.
void expect_same_products(const ContractionPlan& p, const ContractionPlan& q) {
  ASSERT_EQ(p.products().size(), q.products().size());
  for (std::size_t k = 0; k < p.products().size(); ++k) {
    EXPECT_EQ(p.products()[k].a_slot, q.products()[k].a_slot);
    EXPECT_EQ(p.products()[k].b_slot, q.products()[k].b_slot);
    EXPECT_EQ(p.products()[k].scale, q.products()[k].scale);
  }
}

TEST(Contract, MatchesNaiveLoops) {
  blas::ensure_loaded();
  auto o = space(5, 2, 2), v = space(7, 3, 2);
  // C[a,b,i,j] = A[i,a,k,c] * B[c,k,j,b]: rows (a,i) and columns (b,j) interleave in C, so the
  // result goes through scratch and a permutation.
  auto sa = shape({o, v, o, v});
  auto sb = shape({v, o, o, v});
  auto sc = shape({v, v, o, o});
  BlockTensor a(sa), b(sb);
  fill_random(a, 1);
  fill_random(b, 2);
  ContractionPlan plan({sc, {"a", "b", "i", "j"}, "C"}, {sa, {"i", "a", "k", "c"}, "A"},
                       {sb, {"c", "k", "j", "b"}, "B"});
  EXPECT_EQ(plan.output(), ContractionPlan::Output::buffered);
  const auto expected = naive_contraction(
      "abij", "iakc", "ckjb", {{'a', 7}, {'b', 7}, {'c', 7}, {'i', 5}, {'j', 5}, {'k', 5}},
      dense(a), dense(b));
  for (int threads : {1, 2}) {
    BlockTensor c(sc);
    Executor ex(threads);
    contract(plan, 2.0, a, b, c, ex);
    const auto dc = dense(c);
    for (std::size_t e = 0; e < dc.size(); ++e)
      ASSERT_NEAR(dc[e], 2.0 * expected[e], 1e-12) << "threads " << threads;
  }
}

TEST(Contract, StackedTasksStayFineEnoughForTheirWorkers) {
  blas::ensure_loaded();
  // C[i,j,a,b] = A[i,j,c,d] * B[c,d,a,b] with short occupied tiles: the output blocks of one
  // (a, b) read the same B blocks, so the inspector stacks many of them into one task.
  auto o = space(12, 2, 1), v = space(8, 4, 1);
  auto sa = shape({o, o, v, v}), sb = shape({v, v, v, v}), sc = shape({o, o, v, v});
  BlockTensor a(sa), b(sb);
  fill_random(a, 3);
  fill_random(b, 4);
  auto plan_for = [&](int workers) {
    return ContractionPlan({sc, {"i", "j", "a", "b"}, "C"}, {sa, {"i", "j", "c", "d"}, "A"},
                           {sb, {"c", "d", "a", "b"}, "B"}, PlanLayout::inspector,
                           measured_like_model(), workers);
  };
  ContractionPlan one = plan_for(1), four = plan_for(4);
  EXPECT_EQ(one.executed_flops(), four.executed_flops());
  // One worker: the 36 blocks of 4 rows under each of the 4 (a, b) tiles stack into one task.
  EXPECT_EQ(one.tasks().size(), 4u);
  // Four workers: no stacked task holds more than its share, so there are at least 8 per worker.
  const double share = four.executed_flops() / (ContractionPlan::tasks_per_worker * 4);
  for (const ContractionPlan::Task& task : four.tasks()) {
    if (task.last_member - task.first_member > 1) {
      EXPECT_LE(task.flops, share);
    }
  }
  EXPECT_GE(four.tasks().size(), 8u * 4u);
  // Both cuts compute the same result, and it is the naive loops' result.
  BlockTensor c1(sc), c4(sc);
  Executor ex1(1), ex2(2);
  contract(one, 1.0, a, b, c1, ex1);
  contract(four, 1.0, a, b, c4, ex2);
  const auto d1 = dense(c1), d4 = dense(c4);
  for (std::size_t e = 0; e < d1.size(); ++e) ASSERT_NEAR(d1[e], d4[e], 1e-12);
  const auto expected = naive_contraction(
      "ijab", "ijcd", "cdab", {{'i', 12}, {'j', 12}, {'a', 8}, {'b', 8}, {'c', 8}, {'d', 8}},
      dense(a), dense(b));
  for (std::size_t e = 0; e < d4.size(); ++e) ASSERT_NEAR(d4[e], expected[e], 1e-12);
  EXPECT_THROW(plan_for(0), InputError);
}

TEST(Contract, BlocksStackOnlyWhereTheModelPricesItCheaper) {
  blas::ensure_loaded();
  // C[a,c] += A[k,d,a,c] B[k,d]: every output block reads the same B blocks, and A is read in
  // place (transposed). Stacking would copy each A block of 4 x 12 x 12 x 12 into the stacked
  // matrix, transposing it: the model prices that above the GEMM calls it saves, so every block
  // stays its own task. A model in which copying is free and GEMM calls are dear stacks them.
  auto o = space(4, 4, 1), v = space(36, 12, 1);
  auto sa = shape({o, v, v, v});
  auto sb = shape({o, v});
  auto sc = shape({v, v});
  BlockTensor a(sa), b(sb);
  fill_random(a, 5);
  fill_random(b, 6);
  auto plan_for = [&](const CostModel& model) {
    return ContractionPlan({sc, {"a", "c"}, "C"}, {sa, {"k", "d", "a", "c"}, "A"},
                           {sb, {"k", "d"}, "B"}, PlanLayout::inspector, model, 1);
  };
  CostModel copies_free = measured_like_model();
  copies_free.permute = {0.0, 0.0, 0.0, 0.0, 0.0};
  copies_free.gemm[0] = 1e-3;
  ContractionPlan alone = plan_for(measured_like_model()), stacked = plan_for(copies_free);
  EXPECT_EQ(alone.tasks().size(), 9u);
  EXPECT_LT(stacked.tasks().size(), 9u);
  const auto expected = naive_contraction(
      "ac", "kdac", "kd", {{'a', 36}, {'c', 36}, {'k', 4}, {'d', 36}}, dense(a), dense(b));
  for (ContractionPlan* plan : {&alone, &stacked}) {
    BlockTensor c(sc);
    Executor ex(1);
    contract(*plan, 1.0, a, b, c, ex);
    const auto dc = dense(c);
    for (std::size_t e = 0; e < dc.size(); ++e) ASSERT_NEAR(dc[e], expected[e], 1e-12);
  }
}

TEST(Contract, SlabsOfOneBlockMatchNaiveLoops) {
  blas::ensure_loaded();
  // One tile per space, so every operand is a single block: with several workers the plan cuts
  // the output block into slabs of rows or columns, on every output layout and with either or
  // both operands permuted or read in place (transposed or not).
  // The summed label k of the 3-index cases has its own long space, so that their blocks hold
  // enough flops for several slabs of at least min_slab_flops.
  auto o = space(8, 64, 1), v = space(10, 64, 1), x = space(64, 64, 1);
  auto space_of = [&](char label) {
    return label == 'k' ? x : label >= 'i' && label <= 'n' ? o : v;
  };
  struct Case {
    std::string c, a, b;
    ContractionPlan::Output output;
    ContractionPlan::Side side;  // the larger first label of the sides the layout allows
  };
  using Output = ContractionPlan::Output;
  using Side = ContractionPlan::Side;
  const Case cases[] = {
      {"ijab", "ijcd", "cdab", Output::direct, Side::columns},      // both in place
      {"ijab", "ijcd", "abcd", Output::direct, Side::columns},      // B transposed in place
      {"ijab", "icjd", "cdab", Output::direct, Side::rows},         // A permuted
      {"ijab", "ijcd", "acbd", Output::direct, Side::columns},      // B permuted
      {"ijab", "abcd", "cdij", Output::transposed, Side::rows},     // both in place
      {"abij", "ijcd", "cadb", Output::transposed, Side::columns},  // B permuted
      {"ajib", "aik", "kjb", Output::buffered, Side::rows},         // both in place
      {"ajib", "kai", "kjb", Output::buffered, Side::rows},         // A transposed in place
      {"ajib", "aki", "kjb", Output::buffered, Side::rows},         // A permuted
      {"ajib", "aik", "jkb", Output::buffered, Side::columns},      // B permuted
      {"iajb", "ijk", "kab", Output::buffered, Side::columns},      // both in place
      // Both permuted: the longer side, and no more slabs than workers.
      {"ijab", "icjd", "acbd", Output::direct, Side::columns},
      {"ajib", "aki", "jkb", Output::buffered, Side::rows},
      {"abij", "icjd", "cadb", Output::transposed, Side::columns},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.c + " += " + k.a + " * " + k.b);
    auto make = [&](const std::string& labels) {
      std::vector<SpacePtr> spaces;
      for (char l : labels) spaces.push_back(space_of(l));
      return shape(spaces);
    };
    auto split = [](const std::string& labels) {
      LabelList list;
      for (char l : labels) list.emplace_back(1, l);
      return list;
    };
    auto sa = make(k.a), sb = make(k.b), sc = make(k.c);
    BlockTensor a(sa), b(sb), c(sc);
    fill_random(a, 5);
    fill_random(b, 6);
    ContractionPlan plan({sc, split(k.c), "C"}, {sa, split(k.a), "A"}, {sb, split(k.b), "B"},
                         PlanLayout::inspector, CostModel{}, 4);
    EXPECT_EQ(plan.output(), k.output);
    ASSERT_GE(plan.tasks().size(), 2u);
    for (const ContractionPlan::Task& task : plan.tasks()) EXPECT_EQ(task.slab.side, k.side);
    if (plan.recipes().front().a.permute && plan.recipes().front().b.permute) {
      EXPECT_LE(plan.tasks().size(), 4u);
    }
    Executor ex(2);
    contract(plan, 0.5, a, b, c, ex);
    std::map<char, int> extent;
    for (char l : k.a + k.b) extent[l] = static_cast<int>(space_of(l)->size());
    const auto expected = naive_contraction(k.c, k.a, k.b, extent, dense(a), dense(b));
    const auto got = dense(c);
    for (std::size_t e = 0; e < got.size(); ++e) ASSERT_NEAR(got[e], 0.5 * expected[e], 1e-12);
  }
}

// The model's price of every task, written out from the plan's tasks, products and recipes with
// each permutation priced afresh (the inspector prices each block once per layout): a stacked
// task copies each member's A block, a task alone permutes A (or its slab) when its recipe says
// so, B likewise, one GEMM per product, and R is filled and scattered into each member's block
// when the result goes through scratch.
std::vector<double> priced_afresh(const ContractionPlan& plan, const CostModel& model) {
  using Side = ContractionPlan::Side;
  const BlockShape &sa = *plan.a().shape, &sb = *plan.b().shape, &sc = *plan.c().shape;
  std::vector<double> seconds;
  for (const ContractionPlan::Task& task : plan.tasks()) {
    const auto* members = &plan.members()[static_cast<std::size_t>(task.first_member)];
    const std::int64_t count = task.last_member - task.first_member;
    const bool through_r = count > 1 || plan.output() == ContractionPlan::Output::buffered;
    const ContractionPlan::Window w = plan.window(task);
    auto permuted = [&](const BlockShape& shape, slot_t slot, const Axes& axes, int cut) {
      std::vector<extent_t> e(shape.block_extents(slot), shape.block_extents(slot) + shape.rank());
      if (cut >= 0) e[static_cast<std::size_t>(cut)] = task.slab.last - task.slab.first;
      return model.permute_seconds(shape.rank(), e.data(), axes);
    };
    double s = through_r ? model.permute_seconds({PermuteKind::copy, w.rows * w.cols, 1}) : 0.0;
    for (std::int64_t p = 0; p < task.products; ++p) {
      auto product = [&](std::int64_t g) -> const ContractionPlan::Product& {
        return plan.products()[static_cast<std::size_t>(members[g].first + p)];
      };
      auto recipe = [&](std::int64_t g) -> const ContractionPlan::Recipe& {
        return plan.recipes()[static_cast<std::size_t>(product(g).recipe)];
      };
      if (count > 1) {
        for (std::int64_t g = 0; g < count; ++g)
          s += permuted(sa, product(g).a_slot, recipe(g).a_rows, -1);
      } else if (recipe(0).a.permute) {
        s += permuted(sa, product(0).a_slot, recipe(0).a.axes,
                      plan.permuted_slab_axis(recipe(0), Side::rows, task));
      }
      if (recipe(0).b.permute)
        s += permuted(sb, product(0).b_slot, recipe(0).b.axes,
                      plan.permuted_slab_axis(recipe(0), Side::columns, task));
      s += model.gemm_seconds(w.rows, w.cols, product(0).k);
    }
    if (through_r) {
      for (std::int64_t g = 0; g < count; ++g) {
        extent_t e[max_rank];
        plan.r_extents(members[g].c_slot, task, e);
        s += model.permute_seconds(sc.rank(), e, plan.output_axes());
      }
    }
    seconds.push_back(s);
  }
  return seconds;
}

TEST(Contract, TasksArePricedAsTheWorkTheyDo) {
  // C[i,j,a,b] += A[i,c,j,d] B[c,d,a,b], A symmetric under the pair swap (i,c) <-> (j,d): A is
  // permuted, in one layout for its canonical blocks and another for the swapped ones, and short
  // occupied tiles stack. C[a,j,i,b] += A[a,k,i] B[j,k,b] with one block each: both operands are
  // permuted and, with four workers, the output block is cut into slabs.
  const CostModel model = measured_like_model();
  auto o = space(12, 2, 1), v = space(8, 4, 1);
  auto pair_swapped = std::make_shared<BlockShape>(std::vector<SpacePtr>{o, v, o, v},
                                                   PermutationGroup(4, {{{2, 3, 0, 1}, 1}}),
                                                   std::vector<int>{0, 0, 0, 0});
  auto vv = shape({v, v, v, v}), ovov = shape({o, o, v, v});
  auto x = space(8, 64, 1), y = space(10, 64, 1), k = space(64, 64, 1);
  auto axi = shape({y, k, x}), xky = shape({x, k, y}), yxxy = shape({y, x, x, y});
  bool stacked = false, slab = false, two_layouts = false;
  for (int workers : {1, 4}) {
    const ContractionPlan plans[] = {
        ContractionPlan({ovov, {"i", "j", "a", "b"}, "C"},
                        {pair_swapped, {"i", "c", "j", "d"}, "A"}, {vv, {"c", "d", "a", "b"}, "B"},
                        PlanLayout::inspector, model, workers),
        ContractionPlan({yxxy, {"a", "j", "i", "b"}, "C"}, {axi, {"a", "k", "i"}, "A"},
                        {xky, {"j", "k", "b"}, "B"}, PlanLayout::inspector, model, workers)};
    for (const ContractionPlan& plan : plans) {
      SCOPED_TRACE(plan.expression() + ", " + std::to_string(workers) + " workers");
      const std::vector<double> expected = priced_afresh(plan, model);
      ASSERT_EQ(plan.modelled_seconds().size(), expected.size());
      for (std::size_t t = 0; t < expected.size(); ++t)
        EXPECT_NEAR(plan.modelled_seconds()[t], expected[t], 1e-12 * expected[t]) << "task " << t;
      for (const ContractionPlan::Task& task : plan.tasks()) {
        stacked = stacked || task.last_member - task.first_member > 1;
        slab = slab || task.slab.side != ContractionPlan::Side::whole;
      }
      std::set<std::uint64_t> a_layouts;
      for (const ContractionPlan::Product& p : plan.products())
        a_layouts.insert(std::bit_cast<std::uint64_t>(
            plan.recipes()[static_cast<std::size_t>(p.recipe)].a_rows));
      two_layouts = two_layouts || a_layouts.size() > 1;
    }
  }
  // The cases cover what the prices depend on.
  EXPECT_TRUE(stacked);
  EXPECT_TRUE(slab);
  EXPECT_TRUE(two_layouts);
}

TEST(Contract, CorrectedEstimatesAreTheModelScaledAndShifted) {
  // Each task's estimate is scale * modelled + overhead under the last correction given, and the
  // model's own prediction under the identity: as built, and again after another correction.
  auto o = space(12, 2, 2), v = space(8, 4, 2);
  auto oovv = shape({o, o, v, v}), vvvv = shape({v, v, v, v});
  const ContractionPlan plan({oovv, {"i", "j", "a", "b"}, "C"}, {oovv, {"i", "j", "c", "d"}, "T"},
                             {vvvv, {"c", "d", "a", "b"}, "W"}, PlanLayout::inspector,
                             measured_like_model(), 1);
  const std::vector<double> modelled = plan.modelled_seconds();
  ASSERT_FALSE(modelled.empty());
  Schedule schedule(plan);
  EXPECT_EQ(schedule.estimated_seconds(), modelled);
  const ModelCorrection learned{2.5, 3e-6};
  schedule.correct(learned);
  ASSERT_EQ(schedule.estimated_seconds().size(), modelled.size());
  for (std::size_t t = 0; t < modelled.size(); ++t)
    // To within 4 units in the last place: the compiler may fuse the multiply-add either way.
    EXPECT_DOUBLE_EQ(schedule.estimated_seconds()[t],
                     learned.scale * modelled[t] + learned.overhead)
        << "task " << t;
  schedule.correct(ModelCorrection{});
  EXPECT_EQ(schedule.estimated_seconds(), modelled);
  EXPECT_EQ(plan.modelled_seconds(), modelled);
}

TEST(Contract, BatchMatchesItsContractionsOneAfterAnother) {
  blas::ensure_loaded();
  // Three contractions accumulate into C, cut differently (stacked tasks over short occupied
  // tiles, both operands permuted, slabs of one large block), and a fourth writes D. Batched on
  // two workers under every inspector policy, C and D must be exactly what the four give run one
  // after another: the tasks writing a block of C run in item order.
  auto o = space(12, 2, 2), v = space(8, 4, 2), x = space(64, 64, 1);
  auto oovv = shape({o, o, v, v}), vvvv = shape({v, v, v, v}), ovov = shape({o, v, o, v});
  auto oox = shape({o, o, x}), xvv = shape({x, v, v});
  BlockTensor t(oovv), w(vvvv), u(ovov), y(oox), z(xvv);
  for (auto [tensor, seed] : {std::pair{&t, 1}, {&w, 2}, {&u, 3}, {&y, 4}, {&z, 5}})
    fill_random(*tensor, static_cast<std::uint64_t>(seed));
  const CostModel model = measured_like_model();
  auto plan = [&](ShapePtr c, LabelList lc, ShapePtr a, LabelList la, ShapePtr b, LabelList lb) {
    return ContractionPlan({c, lc, "C"}, {a, la, "A"}, {b, lb, "B"}, PlanLayout::inspector, model,
                           2);
  };
  std::vector<ContractionPlan> plans;
  plans.push_back(
      plan(oovv, {"i", "j", "a", "b"}, oovv, {"i", "j", "c", "d"}, vvvv, {"c", "d", "a", "b"}));
  plans.push_back(
      plan(oovv, {"i", "j", "a", "b"}, ovov, {"i", "c", "j", "d"}, vvvv, {"a", "c", "b", "d"}));
  plans.push_back(plan(oovv, {"i", "j", "a", "b"}, oox, {"i", "j", "k"}, xvv, {"k", "a", "b"}));
  plans.push_back(
      plan(ovov, {"i", "a", "j", "b"}, oovv, {"i", "j", "c", "d"}, vvvv, {"c", "d", "a", "b"}));
  const std::pair<const BlockTensor*, const BlockTensor*> operands[] = {
      {&t, &w}, {&u, &w}, {&y, &z}, {&t, &w}};
  const double alphas[] = {1.0, -0.5, 2.0, 0.25};
  std::vector<Schedule> schedules(plans.begin(), plans.end());
  auto items_into = [&](BlockTensor& c, BlockTensor& d) {
    std::vector<BatchItem> items;
    for (std::size_t i = 0; i < plans.size(); ++i)
      items.push_back(
          {&schedules[i], alphas[i], operands[i].first, operands[i].second, i < 3 ? &c : &d});
    return items;
  };
  BlockTensor c0(oovv), d0(ovov);
  Executor one(1);
  for (const BatchItem& item : items_into(c0, d0))
    contract(item.plan(), item.alpha, *item.a, *item.b, *item.c, one);
  const auto expected_c = dense(c0), expected_d = dense(d0);
  // buckets twice: one group of two workers, and two groups (a counter each).
  std::vector<std::pair<std::string, int>> runs{{"buckets", 1}};
  for (const std::string& policy : policy_names())
    if (policy != "tce") runs.emplace_back(policy, 0);
  for (const auto& [policy, group_size] : runs) {
    SCOPED_TRACE(policy + " groups of " + std::to_string(group_size));
    BlockTensor c(oovv), d(ovov);
    PolicyOptions options;
    options.group_size = group_size;
    Executor two(2, policy, options);
    const auto items = items_into(c, d);
    const BatchStats stats = contract_batch(items, two);
    EXPECT_EQ(dense(c), expected_c);
    EXPECT_EQ(dense(d), expected_d);
    ASSERT_EQ(stats.item_task_seconds.size(), plans.size());
    ASSERT_EQ(stats.run.segment_phases.size(), plans.size());
    std::size_t tasks = 0;
    for (std::size_t i = 0; i < plans.size(); ++i) {
      EXPECT_EQ(stats.item_task_seconds[i], schedules[i].measured_seconds());
      EXPECT_EQ(stats.item_task_seconds[i].size(), plans[i].tasks().size());
      for (double seconds : stats.item_task_seconds[i]) EXPECT_GT(seconds, 0.0);
      tasks += plans[i].tasks().size();
      const PhaseSeconds& work = stats.run.segment_phases[i];
      EXPECT_GT(work[static_cast<std::size_t>(Phase::gemm)], 0.0);
      EXPECT_EQ(work[static_cast<std::size_t>(Phase::schedule)], 0.0);
      EXPECT_EQ(work[static_cast<std::size_t>(Phase::wait)], 0.0);
    }
    EXPECT_EQ(stats.run.tasks, static_cast<task_id_t>(tasks));
  }
  // An item may not read what another of the batch writes.
  BlockTensor c(oovv), d(ovov);
  auto items = items_into(c, d);
  items[1].a = &d;  // the shape of u, but the output of the fourth item
  EXPECT_THROW(contract_batch(items, one), InputError);
}

// A policy that reads the blocks of the pool it is given, as a locality-aware policy would, and
// runs the tasks in order on worker 0.
class BlockRecordingPolicy final : public SchedulePolicy {
 public:
  static inline std::vector<std::vector<std::pair<std::int64_t, bool>>> touched;
  static inline std::vector<std::int64_t> bytes;
  void start(const TaskPool& pool, int) override {
    ASSERT_NE(pool.blocks, nullptr);
    const TaskBlocks& b = *pool.blocks;
    touched.assign(pool.costs.size(), {});
    for (std::size_t t = 0; t < pool.costs.size(); ++t)
      for (auto e = b.offsets[t]; e < b.offsets[t + 1]; ++e)
        touched[t].emplace_back(b.blocks[static_cast<std::size_t>(e)],
                                b.writes[static_cast<std::size_t>(e)] != 0);
    bytes.assign(b.bytes.begin(), b.bytes.end());
    order_.resize(pool.costs.size());
    std::iota(order_.begin(), order_.end(), task_id_t{0});
    given_ = false;
  }
  std::span<const task_id_t> next(int worker) override {
    if (worker != 0 || given_.exchange(true)) return {};
    return order_;
  }
  bool wants_blocks() const override { return true; }

 private:
  std::vector<task_id_t> order_;
  std::atomic<bool> given_{false};
};

TEST(Contract, APolicyThatWantsBlocksGetsEachTasksReadsAndWrites) {
  // Two items sharing their A tensor and their output: every task's blocks, each once, against
  // the plan's products and members walked afresh; ids number the tensors in order of first
  // appearance (A, B, C, item by item), and each id's bytes are its block's.
  register_policy(
      "test-block-recording",
      [](const PolicyOptions&) { return std::make_unique<BlockRecordingPolicy>(); },
      "every task on worker 0, in order, after recording the blocks each reads and writes");
  auto o = space(12, 2, 2), v = space(8, 4, 2);
  auto oovv = shape({o, o, v, v}), vvvv = shape({v, v, v, v}), ovov = shape({o, v, o, v});
  BlockTensor t(oovv), w(vvvv), u(ovov), c(oovv);
  for (auto [tensor, seed] : {std::pair{&t, 1}, {&w, 2}, {&u, 3}})
    fill_random(*tensor, static_cast<std::uint64_t>(seed));
  const CostModel model = measured_like_model();
  const ContractionPlan first({oovv, {"i", "j", "a", "b"}, "C"}, {oovv, {"i", "j", "c", "d"}, "T"},
                              {vvvv, {"c", "d", "a", "b"}, "W"}, PlanLayout::inspector, model, 2);
  const ContractionPlan second({oovv, {"i", "j", "a", "b"}, "C"}, {oovv, {"i", "k", "a", "c"}, "T"},
                               {ovov, {"k", "c", "j", "b"}, "U"}, PlanLayout::inspector, model, 2);
  Schedule s1(first), s2(second);
  const std::vector<BatchItem> items = {{&s1, 1.0, &t, &w, &c}, {&s2, 0.5, &t, &u, &c}};
  Executor ex(2, "test-block-recording");
  contract_batch(items, ex);

  std::vector<const BlockTensor*> order;
  std::vector<std::int64_t> base, bytes;
  auto id_base = [&](const BlockTensor* x) {
    for (std::size_t k = 0; k < order.size(); ++k)
      if (order[k] == x) return base[k];
    order.push_back(x);
    base.push_back(static_cast<std::int64_t>(bytes.size()));
    for (slot_t slot = 0; slot < x->shape().num_blocks(); ++slot)
      bytes.push_back(x->shape().block_size(slot) * 8);
    return base.back();
  };
  std::vector<std::vector<std::pair<std::int64_t, bool>>> expected;
  for (const BatchItem& item : items) {
    const std::int64_t a = id_base(item.a), b = id_base(item.b), out = id_base(item.c);
    const ContractionPlan& plan = item.plan();
    for (const ContractionPlan::Task& task : plan.tasks()) {
      std::set<std::pair<std::int64_t, bool>> blocks;
      for (auto m = task.first_member; m < task.last_member; ++m) {
        const auto& member = plan.members()[static_cast<std::size_t>(m)];
        blocks.insert({out + member.c_slot, true});
        for (auto p = member.first; p < member.first + task.products; ++p) {
          const auto& product = plan.products()[static_cast<std::size_t>(p)];
          blocks.insert({a + product.a_slot, false});
          blocks.insert({b + product.b_slot, false});
        }
      }
      expected.emplace_back(blocks.begin(), blocks.end());
    }
  }
  ASSERT_EQ(BlockRecordingPolicy::touched.size(), expected.size());
  for (std::size_t task = 0; task < expected.size(); ++task) {
    auto got = BlockRecordingPolicy::touched[task];
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, expected[task]) << "task " << task;
  }
  EXPECT_EQ(BlockRecordingPolicy::bytes, bytes);
  // Policies that do not ask for blocks get none.
  EXPECT_FALSE(Executor(1, "counter").policy_wants_blocks());
}

TEST(Contract, ReportsTheFirstTaskError) {
  Executor ex(2);
  std::vector<double> costs(100, 1.0);
  EXPECT_THROW(ex.run({costs},
                      [](task_id_t t, int) {
                        if (t == 37) throw std::runtime_error("task 37 failed");
                      }),
               std::runtime_error);
  // The pool survives an error and runs again.
  std::atomic<int> ran{0};
  ex.run({costs}, [&](task_id_t, int) { ++ran; });
  EXPECT_EQ(ran.load(), 100);
}

TEST(Contract, PlansBuiltTogetherAreThePlansBuiltOneByOne) {
  auto o = space(12, 2, 2), v = space(8, 4, 2), x = space(64, 64, 1);
  auto oovv = shape({o, o, v, v}), vvvv = shape({v, v, v, v}), ovov = shape({o, v, o, v});
  auto oox = shape({o, o, x}), xvv = shape({x, v, v});
  const CostModel model = measured_like_model();
  std::vector<PlanRequest> requests = {
      {{oovv, {"i", "j", "a", "b"}, "C"},
       {oovv, {"i", "j", "c", "d"}, "T"},
       {vvvv, {"c", "d", "a", "b"}, "W"}},
      {{oovv, {"i", "j", "a", "b"}, "C"},
       {ovov, {"i", "c", "j", "d"}, "U"},
       {vvvv, {"a", "c", "b", "d"}, "W"}},
      {{oovv, {"i", "j", "a", "b"}, "C"}, {oox, {"i", "j", "k"}, "Y"}, {xvv, {"k", "a", "b"}, "Z"}},
      {{ovov, {"i", "a", "j", "b"}, "D"},
       {oovv, {"i", "j", "c", "d"}, "T"},
       {vvvv, {"c", "d", "a", "b"}, "W"}},
  };
  Executor ex(2, "counter", {}, SlowWorker{});
  for (PlanLayout layout : {PlanLayout::inspector, PlanLayout::tce}) {
    const BuiltPlans built = build_plans(requests, layout, model, 2, ex);
    ASSERT_EQ(built.plans.size(), requests.size());
    ASSERT_EQ(built.workers.size(), requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const ContractionPlan alone(requests[i].c, requests[i].a, requests[i].b, layout, model, 2);
      const ContractionPlan& p = built.plans[i];
      EXPECT_EQ(p.expression(), alone.expression());
      EXPECT_EQ(p.tasks().size(), alone.tasks().size());
      expect_same_products(p, alone);
      EXPECT_EQ(p.modelled_seconds(), alone.modelled_seconds());
      EXPECT_EQ(p.loop(), alone.loop());
      EXPECT_TRUE(built.workers[i] == 0 || built.workers[i] == 1);
      EXPECT_GE(p.inspector_started(), built.start);
    }
    // The batch's wall time is reported; how long it is depends on the machine, so no more.
    EXPECT_GT(built.seconds, 0.0);
  }
  // Of two bad requests, the error is the first one's, whichever worker reached it first.
  requests[1].a.labels = {"i", "c", "j"};
  requests[3].b.labels = {"c", "d", "a", "q"};
  try {
    build_plans(requests, PlanLayout::inspector, model, 2, ex);
    FAIL() << "a bad request was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("U[i,c,j] gives 3 labels"), std::string::npos) << e.what();
  }
}

TEST(Contract, LabelsOfSeveralLettersPlanLikeOneLetterLabels) {
  auto o = space(12, 2, 2), v = space(8, 4, 2);
  auto oovv = shape({o, o, v, v}), ovvo = shape({o, v, v, o});
  const CostModel model = measured_like_model();
  auto plan = [&](std::vector<std::string> h, std::vector<std::string> p) {
    // i0[p3,p4,h1,h2] += t[p3,p5,h1,h6] * i1[h6,p4,h2,p5], as in paper 004's CCD.
    return ContractionPlan({oovv, {h[0], h[1], p[0], p[1]}, "C"},
                           {oovv, {h[0], h[2], p[0], p[2]}, "T"},
                           {ovvo, {h[2], p[1], p[2], h[1]}, "I"}, PlanLayout::inspector, model, 1);
  };
  const ContractionPlan letters = plan({"i", "j", "m"}, {"a", "b", "e"});
  const ContractionPlan words = plan({"h1", "h2", "h6"}, {"p3", "p4", "p5"});
  EXPECT_EQ(words.expression(), "C[h1,h2,p3,p4] += T[h1,h6,p3,p5] * I[h6,p4,p5,h2]");
  expect_same_products(words, letters);
  EXPECT_EQ(words.modelled_seconds(), letters.modelled_seconds());
}

TEST(Contract, EachLabelFaultIsNamed) {
  auto o = space(6, 2, 1), v = space(8, 4, 1);
  auto oo = shape({o, o}), ov = shape({o, v});
  const CostModel model;
  struct Case {
    Operand c, a, b;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{ov, {"i", "a"}, "C"}, {oo, {"i", "j"}, "A"}, {ov, {"j"}, "B"}, "B[j] gives 1 labels"},
      {{ov, {"i", "a"}, "C"}, {nullptr, {"i", "j"}, "A"}, {ov, {"j", "a"}, "B"}, "has no tensor"},
      {{ov, {"i", "a"}, "C"}, {oo, {"i", ""}, "A"}, {ov, {"", "a"}, "B"}, "an empty label"},
      {{ov, {"i", "a"}, "C"}, {oo, {"j", "j"}, "A"}, {ov, {"j", "a"}, "B"}, "label 'j' twice"},
      {{ov, {"kl", "a"}, "C"}, {oo, {"kl", "kl"}, "A"}, {ov, {"kl", "a"}, "B"}, "'kl' twice"},
      {{ov, {"i", "a"}, "C"},
       {oo, {"k", "j"}, "A"},
       {ov, {"j", "a"}, "B"},
       "'i' of C[i,a] appears"},
      {{oo, {"i", "j"}, "C"}, {oo, {"i", "k"}, "A"}, {oo, {"k", "i"}, "B"}, "batched (Hadamard)"},
      {{ov, {"i", "a"}, "C"},
       {oo, {"i", "j"}, "A"},
       {ov, {"k", "a"}, "B"},
       "'j' of A[i,j] appears"},
      {{ov, {"i", "a"}, "C"}, {ov, {"i", "j"}, "A"}, {ov, {"j", "a"}, "B"}, "label 'j' has space"},
      {{ov, {"i", "a"}, "C"}, {oo, {"a", "j"}, "A"}, {ov, {"j", "i"}, "B"}, "label 'i' has space"},
  };
  for (const Case& k : cases) {
    try {
      ContractionPlan(k.c, k.a, k.b, PlanLayout::inspector, model, 1);
      FAIL() << "accepted, expected: " << k.says;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(k.says), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tilecc
