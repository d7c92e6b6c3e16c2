// The block-store protocol: contractions through a reference store (a plain map of blocks, no
// views) equal those through the memory store element for element, in single, stacked and slab
// tasks; and every transfer is counted exactly, as the plan's tasks say it must be: one fetch of
// each product's A and B block (a stacked task reads its B block once per product), one write per
// output block of each task.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "test_shapes.hpp"
#include "tilecc/blas.hpp"
#include "tilecc/contract.hpp"
#include "tilecc/error.hpp"
#include "tilecc/ops.hpp"
#include "tilecc/store.hpp"

namespace tilecc {
namespace {

using testing::dense;
using testing::shape;
using testing::space;

// Blocks in a std::map: nothing resident the pipeline could reach past the protocol to, except
// block(), which element-wise operations (fill_random, to_dense) use.
class MapStore final : public BlockStore {
 public:
  explicit MapStore(const BlockShape& shape) : BlockStore(shape) {
    for (slot_t b = 0; b < shape.num_blocks(); ++b)
      blocks_[b].assign(static_cast<std::size_t>(shape.block_size(b)), 0.0);
  }
  const double* fetch(slot_t slot, ScratchBuffer& buffer) const override {
    count_read(Transfer::copy, slot);
    const std::vector<double>& x = blocks_.at(slot);
    return std::copy(x.begin(), x.end(), buffer.get(static_cast<extent_t>(x.size()))) - x.size();
  }
  double* writable(slot_t) override { return nullptr; }
  void accumulate(slot_t slot, const double* values) override {
    count_write(Transfer::copy, slot);
    std::lock_guard lock(mutex_);
    std::vector<double>& x = blocks_.at(slot);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += values[i];
  }
  void write(slot_t slot, const double* values) override {
    count_write(Transfer::copy, slot);
    std::vector<double>& x = blocks_.at(slot);
    std::copy_n(values, x.size(), x.begin());
  }
  bool zero_copy() const override { return false; }
  double* block(slot_t slot) override { return blocks_.at(slot).data(); }
  const double* block(slot_t slot) const override { return blocks_.at(slot).data(); }
  const char* kind() const override { return "test-map"; }

 private:
  std::map<slot_t, std::vector<double>> blocks_;
  std::mutex mutex_;
};

struct Expected {
  std::int64_t a_fetches = 0, b_fetches = 0, c_writes = 0;
};

// What the pipeline must read and write for one execution of `plan`, from its tasks.
Expected expected_transfers(const ContractionPlan& plan) {
  Expected e;
  for (const ContractionPlan::Task& task : plan.tasks()) {
    const std::int64_t members = task.last_member - task.first_member;
    e.a_fetches += members * task.products;
    e.b_fetches += task.products;  // a stacked task's members share each product's B block
    e.c_writes += members;
  }
  return e;
}

void register_map_store() {
  static const bool registered = [] {
    register_store("test-map", [](const BlockShape& s, const StoreResources&) {
      return std::make_unique<MapStore>(s);
    });
    return true;
  }();
  (void)registered;
}

struct Case {
  const char* name;
  std::vector<std::string> lc, la, lb;
  int occupied, virtuals;
  extent_t o_tile, v_tile;
};

TEST(StoreProtocol, ContractionsThroughAReferenceStoreMatchTheMemoryStore) {
  blas::ensure_loaded();
  register_map_store();
  const Case cases[] = {
      // buffered output (a permutation of R into C)
      {"buffered", {"a", "b", "i", "j"}, {"i", "a", "k", "c"}, {"c", "k", "j", "b"}, 5, 7, 2, 3},
      // stacked tasks: many output blocks share their B blocks
      {"stacked", {"i", "j", "a", "b"}, {"i", "j", "c", "d"}, {"c", "d", "a", "b"}, 12, 8, 2, 4},
      // in place output, few large blocks: slabs of one block
      {"slabs", {"i", "a"}, {"i", "k"}, {"k", "a"}, 40, 60, 40, 60},
  };
  for (const Case& c : cases) {
    auto o = space(c.occupied, c.o_tile, 2), v = space(c.virtuals, c.v_tile, 2);
    auto spaces_of = [&](const std::vector<std::string>& labels) {
      std::vector<SpacePtr> out;
      for (const std::string& l : labels) out.push_back(l[0] >= 'i' ? o : v);
      return out;
    };
    auto sa = shape(spaces_of(c.la)), sb = shape(spaces_of(c.lb)), sc = shape(spaces_of(c.lc));
    for (int threads : {1, 2}) {
      ContractionPlan plan({sc, c.lc, "C"}, {sa, c.la, "A"}, {sb, c.lb, "B"}, PlanLayout::inspector,
                           CostModel{}, threads);
      std::vector<double> results[2];
      for (int which = 0; which < 2; ++which) {
        const std::string store = which == 0 ? "memory" : "test-map";
        BlockTensor a(sa, store), b(sb, store), out(sc, store);
        fill_random(a, 1);
        fill_random(b, 2);
        Executor ex(threads);
        contract(plan, 1.5, a, b, out, ex);
        const Expected e = expected_transfers(plan);
        const Transfer kind = which == 0 ? Transfer::view : Transfer::copy;
        const auto k = static_cast<std::size_t>(kind);
        EXPECT_EQ(a.store().transfers().totals().calls[k], e.a_fetches) << c.name << " " << store;
        EXPECT_EQ(b.store().transfers().totals().calls[k], e.b_fetches) << c.name << " " << store;
        EXPECT_EQ(out.store().transfers().totals().calls[k], e.c_writes) << c.name << " " << store;
        // Bytes: each call moves one whole block.
        std::int64_t a_bytes = 0;
        for (const ContractionPlan::Task& task : plan.tasks())
          for (auto m = task.first_member; m < task.last_member; ++m)
            for (std::int64_t p = 0; p < task.products; ++p)
              a_bytes +=
                  8 * sa->block_size(plan
                                         .products()[static_cast<std::size_t>(
                                             plan.members()[static_cast<std::size_t>(m)].first + p)]
                                         .a_slot);
        EXPECT_EQ(a.store().transfers().totals().bytes[k], a_bytes) << c.name << " " << store;
        results[which] = dense(out);  // read through the store too: after the counts
      }
      ASSERT_EQ(results[0].size(), results[1].size());
      for (std::size_t e = 0; e < results[0].size(); ++e)
        ASSERT_EQ(results[0][e], results[1][e]) << c.name << " threads " << threads;
    }
  }
}

TEST(StoreProtocol, StoresAreRegisteredByName) {
  register_map_store();
  const auto names = store_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "memory"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "copy"), names.end());
  EXPECT_THROW(register_store("memory",
                              [](const BlockShape& s, const StoreResources&) {
                                return std::make_unique<MemoryStore>(s);
                              }),
               InputError);
  auto s = shape({space(3, 3, 1)});
  try {
    BlockTensor t(s, "no-such-store");
    FAIL() << "an unknown store was made";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "registered stores are: copy, disk, memory, mpi, none, test-map"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tilecc
