// The fast permutation kernel against its reference twin: random ranks, extents, axes, alpha,
// beta. The seed is printed; TILECC_TEST_SEED replays one.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "test_random.hpp"
#include "tilecc/kernels/permute.hpp"

namespace tilecc {
namespace {

TEST(Permute, MatchesReferenceOnRandomCases) {
  TestRandom random;
  for (int trial = 0; trial < 400; ++trial) {
    const int rank = random.pick(0, 6);
    extent_t extents[max_rank];
    extent_t size = 1;
    for (int k = 0; k < rank; ++k) {
      extents[k] = random.pick(1, rank <= 2 ? 70 : (rank <= 4 ? 12 : 5));
      size *= extents[k];
    }
    const Axes axes = random.axes(rank);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> src(static_cast<std::size_t>(size)), fast(src.size()), ref(src.size());
    for (double& x : src) x = u(random.engine());
    for (std::size_t e = 0; e < fast.size(); ++e) fast[e] = ref[e] = u(random.engine());
    const double betas[] = {0.0, 1.0, -0.5};
    const double alpha = u(random.engine()), beta = betas[trial % 3];
    kernels::permute(rank, extents, axes, alpha, src.data(), beta, fast.data());
    kernels::permute_reference(rank, extents, axes, alpha, src.data(), beta, ref.data());
    for (std::size_t e = 0; e < fast.size(); ++e)
      ASSERT_NEAR(fast[e], ref[e], 4e-16 * (1.0 + std::abs(ref[e])))
          << "trial " << trial << " element " << e;
  }
}

// A random sub-block of a random block, permuted into a random sub-block of a larger destination
// block: the same as the reference on the compacted sub-block, and nothing outside it written.
TEST(Permute, StridedViewsMatchReferenceOnCompactCopies) {
  TestRandom random;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 400; ++trial) {
    const int rank = random.pick(1, 5);
    const Axes axes = random.axes(rank);
    // Source block `whole`, of which the view is [first, first + view) per axis.
    extent_t whole[max_rank], view[max_rank], first[max_rank], src_strides[max_rank];
    extent_t size = 1, view_size = 1;
    for (int k = 0; k < rank; ++k) {
      whole[k] = random.pick(1, rank <= 2 ? 40 : 7);
      view[k] = random.pick(1, static_cast<int>(whole[k]));
      first[k] = random.pick(0, static_cast<int>(whole[k] - view[k]));
      size *= whole[k];
      view_size *= view[k];
    }
    for (extent_t k = rank - 1, s = 1; k >= 0; s *= whole[k--]) src_strides[k] = s;
    // Destination block: the view's permuted extents plus a margin, the view at an offset.
    extent_t dst_whole[max_rank], dst_first[max_rank], dst_strides[max_rank];
    extent_t dst_size = 1;
    for (int j = 0; j < rank; ++j) {
      const extent_t e = view[axes[static_cast<std::size_t>(j)]];
      dst_first[j] = random.pick(0, 2);
      dst_whole[j] = e + dst_first[j] + random.pick(0, 2);
      dst_size *= dst_whole[j];
    }
    for (extent_t j = rank - 1, s = 1; j >= 0; s *= dst_whole[j--]) dst_strides[j] = s;
    std::vector<double> src(static_cast<std::size_t>(size)),
        dst(static_cast<std::size_t>(dst_size));
    for (double& x : src) x = u(random.engine());
    for (double& x : dst) x = u(random.engine());
    const std::vector<double> before = dst;
    extent_t src_offset = 0, dst_offset = 0;
    for (int k = 0; k < rank; ++k) src_offset += first[k] * src_strides[k];
    for (int j = 0; j < rank; ++j) dst_offset += dst_first[j] * dst_strides[j];
    const double betas[] = {0.0, 1.0, -0.5};
    const double alpha = u(random.engine()), beta = betas[trial % 3];
    kernels::permute_strided(rank, view, src_strides, axes, alpha, src.data() + src_offset, beta,
                             dst.data() + dst_offset, dst_strides);

    // Reference: compact the source view, permute it, compare with the destination view.
    std::vector<double> compact(static_cast<std::size_t>(view_size)), ref(compact.size());
    std::vector<extent_t> index(static_cast<std::size_t>(rank), 0);
    // Row-major odometer over a view's elements.
    auto next_index = [&](std::vector<extent_t>& at, const extent_t* extents) {
      for (int k = rank - 1; k >= 0 && ++at[static_cast<std::size_t>(k)] == extents[k]; --k)
        at[static_cast<std::size_t>(k)] = 0;
    };
    for (std::size_t e = 0; e < compact.size(); ++e) {
      extent_t at = src_offset;
      for (int k = 0; k < rank; ++k) at += index[static_cast<std::size_t>(k)] * src_strides[k];
      compact[e] = src[static_cast<std::size_t>(at)];
      next_index(index, view);
    }
    std::vector<bool> inside(dst.size(), false);
    std::fill(index.begin(), index.end(), 0);
    std::vector<extent_t> dst_view(static_cast<std::size_t>(rank));
    for (int j = 0; j < rank; ++j)
      dst_view[static_cast<std::size_t>(j)] = view[axes[static_cast<std::size_t>(j)]];
    for (std::size_t e = 0; e < ref.size(); ++e) {
      extent_t at = dst_offset;
      for (int j = 0; j < rank; ++j) at += index[static_cast<std::size_t>(j)] * dst_strides[j];
      ref[e] = before[static_cast<std::size_t>(at)];
      inside[static_cast<std::size_t>(at)] = true;
      next_index(index, dst_view.data());
    }
    kernels::permute_reference(rank, view, axes, alpha, compact.data(), beta, ref.data());
    std::fill(index.begin(), index.end(), 0);
    for (std::size_t e = 0; e < ref.size(); ++e) {
      extent_t at = dst_offset;
      for (int j = 0; j < rank; ++j) at += index[static_cast<std::size_t>(j)] * dst_strides[j];
      ASSERT_NEAR(dst[static_cast<std::size_t>(at)], ref[e], 4e-16 * (1.0 + std::abs(ref[e])))
          << "trial " << trial << " element " << e;
      next_index(index, dst_view.data());
    }
    for (std::size_t e = 0; e < dst.size(); ++e) {
      if (!inside[e]) {
        ASSERT_EQ(dst[e], before[e]) << "trial " << trial << " wrote outside the view";
      }
    }
  }
}

// permute_loops, which the cost model prices permutations by, against the loops of the kernel's
// fused layout measured on the reference kernel: permuting a block that holds each element's own
// offset shows the source stride of every destination axis. Neighbouring destination axes
// (extent-1 ones left out) fuse when the outer one's stride is the inner one's times its extent;
// the innermost fused axis is a contiguous run when its stride is 1, and otherwise is transposed
// in squares of 16; its source axes are those of the destination axes fused into it.
TEST(Permute, LoopsAreThoseOfTheFusedLayout) {
  TestRandom random;
  for (int trial = 0; trial < 2000; ++trial) {
    const int rank = random.pick(0, 6);
    extent_t extents[max_rank], dst_extents[max_rank], dst_strides[max_rank];
    for (int k = 0; k < rank; ++k)
      extents[k] = random.pick(0, 2) == 0 ? 1 : random.pick(2, rank <= 3 ? 40 : 6);
    const Axes axes = random.axes(rank);
    for (int j = 0; j < rank; ++j) dst_extents[j] = extents[axes[static_cast<std::size_t>(j)]];
    const extent_t size = kernels::dense_strides(rank, dst_extents, dst_strides);
    std::vector<double> offsets(static_cast<std::size_t>(size)), dst(offsets.size());
    std::iota(offsets.begin(), offsets.end(), 0.0);
    kernels::permute_reference(rank, extents, axes, 1.0, offsets.data(), 0.0, dst.data());

    int groups = 0;
    extent_t outer = 1, inner = 1, inner_stride = 0;
    unsigned inner_axes = 0;  // source axes of the innermost group
    for (int j = 0; j < rank; ++j) {
      if (dst_extents[j] == 1) continue;
      const auto stride = static_cast<extent_t>(dst[static_cast<std::size_t>(dst_strides[j])]);
      const unsigned axis = 1u << axes[static_cast<std::size_t>(j)];
      if (groups > 0 && inner_stride == stride * dst_extents[j]) {
        inner *= dst_extents[j];
        inner_axes |= axis;
      } else {
        outer *= inner;
        inner = dst_extents[j];
        inner_axes = axis;
        ++groups;
      }
      inner_stride = stride;
    }
    const bool runs = groups == 0 || inner_stride == 1;
    const extent_t loops = groups == 0 ? 1 : runs ? outer : outer * ((inner + 15) / 16);

    const kernels::PermuteLoops p = kernels::permute_loops(rank, extents, axes);
    ASSERT_EQ(p.elements, size) << "trial " << trial;
    ASSERT_EQ(p.fused_rank, groups) << "trial " << trial;
    ASSERT_EQ(p.runs, runs) << "trial " << trial;
    ASSERT_EQ(p.inner_loops, loops) << "trial " << trial;
    if (size > 0) {
      ASSERT_EQ(p.inner_axes, inner_axes) << "trial " << trial;
    }
  }
}

TEST(Permute, ReferenceTransposesAMatrix) {
  const extent_t extents[2] = {2, 3};
  const double src[6] = {1, 2, 3, 4, 5, 6};
  double dst[6] = {};
  Axes axes{};
  axes[0] = 1;
  axes[1] = 0;
  kernels::permute_reference(2, extents, axes, 1.0, src, 0.0, dst);
  const double expected[6] = {1, 4, 2, 5, 3, 6};
  for (int e = 0; e < 6; ++e) EXPECT_EQ(dst[e], expected[e]);
}

}  // namespace
}  // namespace tilecc
