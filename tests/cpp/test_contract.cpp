// A contraction through plan + executor against naive loops over the dense tensors, at 1 and 2
// threads, for an output whose index order needs the buffered (permuted) path.
#include <gtest/gtest.h>

#include <random>

#include "tilecc/blas.hpp"
#include "tilecc/contract.hpp"
#include "tilecc/ops.hpp"

namespace tilecc {
namespace {

SpacePtr space(int n, extent_t tile, int irreps) {
  std::vector<Orbital> orbs;
  for (int p = 0; p < n; ++p) orbs.push_back({Spin::none, p % irreps, 0.0});
  return std::make_shared<IndexSpace>(orbs, tile);
}

std::vector<double> dense(const BlockTensor& t) {
  std::vector<double> d(static_cast<std::size_t>(t.shape().dense_elements()), 0.0);
  to_dense(t, d.data());
  return d;
}

TEST(Contract, MatchesNaiveLoops) {
  blas::ensure_loaded();
  auto o = space(5, 2, 2), v = space(7, 3, 2);
  // C[a,b,i,j] = A[i,a,k,c] * B[c,k,j,b]: rows (a,i) and columns (b,j) interleave in C, so the
  // result goes through scratch and a permutation.
  auto sa = std::make_shared<BlockShape>(std::vector<SpacePtr>{o, v, o, v}, PermutationGroup(4),
                                         std::vector<int>{0, 0, 0, 0});
  auto sb = std::make_shared<BlockShape>(std::vector<SpacePtr>{v, o, o, v}, PermutationGroup(4),
                                         std::vector<int>{0, 0, 0, 0});
  auto sc = std::make_shared<BlockShape>(std::vector<SpacePtr>{v, v, o, o}, PermutationGroup(4),
                                         std::vector<int>{0, 0, 0, 0});
  BlockTensor a(sa), b(sb);
  fill_random(a, 1);
  fill_random(b, 2);
  ContractionPlan plan({sc, {"a", "b", "i", "j"}, "C"}, {sa, {"i", "a", "k", "c"}, "A"},
                       {sb, {"c", "k", "j", "b"}, "B"});
  EXPECT_EQ(plan.output(), ContractionPlan::Output::buffered);
  const auto da = dense(a), db = dense(b);
  const int no = 5, nv = 7;
  for (int threads : {1, 2}) {
    BlockTensor c(sc);
    Executor ex(threads);
    contract(plan, 2.0, a, b, c, ex);
    const auto dc = dense(c);
    for (int ia = 0; ia < nv; ++ia)
      for (int i = 0; i < no; ++i)
        for (int ib = 0; ib < nv; ++ib)
          for (int j = 0; j < no; ++j) {
            double sum = 0.0;
            for (int k = 0; k < no; ++k)
              for (int ic = 0; ic < nv; ++ic)
                sum +=
                    da[((i * nv + ia) * no + k) * nv + ic] * db[((ic * no + k) * no + j) * nv + ib];
            ASSERT_NEAR(dc[((ia * nv + ib) * no + i) * no + j], 2.0 * sum, 1e-12)
                << "threads " << threads;
          }
  }
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

}  // namespace
}  // namespace tilecc
