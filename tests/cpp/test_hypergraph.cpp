// The task–block hypergraph of a plan against brute force from the shapes alone: for each task's
// output blocks, every (A block, B block) pair of the summed tiles that are both non-zero, found
// by locating every tile tuple; and the connectivity−1 cut of a partition against its definition.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "test_shapes.hpp"
#include "tilecc/error.hpp"
#include "tilecc/hypergraph.hpp"

namespace tilecc {
namespace {

using testing::shape;
using testing::space;

ShapePtr antisymmetric_pairs(SpacePtr first, SpacePtr second) {
  // t[p,q,r,s] = -t[q,p,r,s] = -t[p,q,s,r]
  return std::make_shared<BlockShape>(std::vector<SpacePtr>{first, first, second, second},
                                      PermutationGroup(4, {{{1, 0, 2, 3}, -1}, {{0, 1, 3, 2}, -1}}),
                                      std::vector<int>{0, 0, 0, 0});
}

using Net = std::pair<int, slot_t>;  // tensor (0 A, 1 B, 2 C), slot

// Per task, the blocks it must touch, from the shapes: its output blocks, and for each of them
// every tuple of summed tiles whose A and B blocks are both non-zero.
std::vector<std::set<Net>> brute_force(const ContractionPlan& plan) {
  const Operand &a = plan.a(), &b = plan.b(), &c = plan.c();
  std::vector<std::string> summed;
  for (const std::string& l : a.labels)
    if (std::find(b.labels.begin(), b.labels.end(), l) != b.labels.end()) summed.push_back(l);
  std::map<std::string, tile_t> tiles_of_summed;
  for (const std::string& l : summed) {
    const auto k = std::find(a.labels.begin(), a.labels.end(), l) - a.labels.begin();
    tiles_of_summed[l] = a.shape->space(static_cast<int>(k)).num_tiles();
  }
  std::vector<std::set<Net>> out(plan.tasks().size());
  for (std::size_t t = 0; t < plan.tasks().size(); ++t) {
    const ContractionPlan::Task& task = plan.tasks()[t];
    for (auto m = task.first_member; m < task.last_member; ++m) {
      const slot_t c_slot = plan.members()[static_cast<std::size_t>(m)].c_slot;
      out[t].insert({2, c_slot});
      std::map<std::string, tile_t> at;
      for (std::size_t k = 0; k < c.labels.size(); ++k)
        at[c.labels[k]] = c.shape->block_tiles(c_slot)[k];
      for (const std::string& l : summed) at[l] = 0;
      for (;;) {
        std::vector<tile_t> ta, tb;
        for (const std::string& l : a.labels) ta.push_back(at[l]);
        for (const std::string& l : b.labels) tb.push_back(at[l]);
        const auto ra = a.shape->locate(ta.data()), rb = b.shape->locate(tb.data());
        if (ra && rb) {
          out[t].insert({0, ra->slot});
          out[t].insert({1, rb->slot});
        }
        std::size_t q = summed.size();
        while (q > 0 && ++at[summed[q - 1]] == tiles_of_summed[summed[q - 1]]) at[summed[--q]] = 0;
        if (q == 0) break;
      }
    }
  }
  return out;
}

void expect_matches_brute_force(const ContractionPlan& plan, const char* what) {
  const TaskBlockHypergraph h = task_block_hypergraph(plan);
  ASSERT_EQ(h.task_weights.size(), plan.tasks().size()) << what;
  std::vector<std::set<Net>> from_nets(plan.tasks().size());
  const BlockShape* shapes[3] = {plan.a().shape.get(), plan.b().shape.get(), plan.c().shape.get()};
  for (std::size_t e = 0; e < h.nets.size(); ++e) {
    const auto tensor = static_cast<int>(h.nets[e].tensor);
    EXPECT_EQ(h.nets[e].bytes, 8 * shapes[tensor]->block_size(h.nets[e].slot)) << what;
    const auto pins = h.pins_of(e);
    EXPECT_TRUE(std::is_sorted(pins.begin(), pins.end())) << what;
    EXPECT_EQ(std::set<task_id_t>(pins.begin(), pins.end()).size(), pins.size()) << what;
    for (const task_id_t t : pins)
      from_nets[static_cast<std::size_t>(t)].insert({tensor, h.nets[e].slot});
  }
  const auto expected = brute_force(plan);
  for (std::size_t t = 0; t < expected.size(); ++t)
    EXPECT_EQ(from_nets[t], expected[t]) << what << " task " << t;
  for (std::size_t t = 0; t < expected.size(); ++t)
    EXPECT_EQ(h.task_weights[t], plan.modelled_seconds()[t]) << what;
}

TEST(Hypergraph, NetsAreTheBlocksEachTaskReadsAndWrites) {
  auto o = space(6, 2, 2), v = space(9, 3, 2);
  // Ladder with antisymmetric pairs: summed (c, d) visited once per orbit.
  auto t2 = antisymmetric_pairs(o, v), w = antisymmetric_pairs(v, v);
  for (int workers : {1, 4}) {
    ContractionPlan ladder({t2, {"i", "j", "a", "b"}, "R"}, {t2, {"i", "j", "c", "d"}, "T"},
                           {w, {"a", "b", "c", "d"}, "W"}, PlanLayout::inspector, CostModel{},
                           workers);
    expect_matches_brute_force(ladder, "ladder");
  }
  // A ring term without symmetry, and a matrix product whose few large blocks are cut in slabs.
  auto ring_a = shape({o, v, o, v}), ring_b = shape({v, o, o, v}), ring_c = shape({v, v, o, o});
  ContractionPlan ring({ring_c, {"a", "b", "i", "j"}, "C"}, {ring_a, {"i", "a", "k", "c"}, "A"},
                       {ring_b, {"c", "k", "j", "b"}, "B"});
  expect_matches_brute_force(ring, "ring");
  auto big_o = space(40, 40, 1), big_v = space(60, 60, 1);
  ContractionPlan slabs(
      {shape({big_o, big_v}), {"i", "a"}, "C"}, {shape({big_o, big_o}), {"i", "k"}, "A"},
      {shape({big_o, big_v}), {"k", "a"}, "B"}, PlanLayout::inspector, CostModel{}, 4);
  expect_matches_brute_force(slabs, "slabs");
}

TEST(Hypergraph, ConnectivityCutCountsEachNetOncePerExtraPart) {
  auto o = space(4, 2, 1), v = space(6, 3, 1);
  auto sa = shape({o, v}), sb = shape({v, v}), sc = shape({o, v});
  ContractionPlan plan({sc, {"i", "a"}, "C"}, {sa, {"i", "b"}, "A"}, {sb, {"b", "a"}, "B"},
                       PlanLayout::inspector, CostModel{}, 4);
  const TaskBlockHypergraph h = task_block_hypergraph(plan);
  const std::size_t tasks = h.task_weights.size();
  ASSERT_GE(tasks, 2u);
  EXPECT_EQ(h.connectivity_cut(std::vector<int>(tasks, 0)), 0);  // one part moves nothing
  std::vector<int> alternate(tasks);
  for (std::size_t t = 0; t < tasks; ++t) alternate[t] = static_cast<int>(t % 2);
  std::int64_t expected = 0;
  for (std::size_t e = 0; e < h.nets.size(); ++e) {
    std::set<int> parts;
    for (const task_id_t t : h.pins_of(e)) parts.insert(alternate[static_cast<std::size_t>(t)]);
    expected += h.nets[e].bytes * static_cast<std::int64_t>(parts.size() - 1);
  }
  EXPECT_EQ(h.connectivity_cut(alternate), expected);
  EXPECT_GT(expected, 0);
  EXPECT_THROW(h.connectivity_cut(std::vector<int>(tasks + 1, 0)), InputError);
}

}  // namespace
}  // namespace tilecc
