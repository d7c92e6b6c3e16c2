// The fast block permutation. Strategy (after HPTT and TCE's SORT4):
//  1. drop extent-1 axes and fuse destination axes that are also adjacent, in order, in the source;
//  2. if the innermost destination axis is contiguous in the source, stream contiguous runs;
//  3. otherwise transpose the plane (source-contiguous axis, destination-contiguous axis) in
//     tile x tile squares that fit in L1, looping over all other axes outside.
#include "tilecc/kernels/permute.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace tilecc::kernels {
namespace {

enum class Mode { overwrite, accumulate, general };

// A portable build (no -march=native) compiles the kernel three times, for AVX-512, for AVX2 and
// for baseline x86-64, and the loader picks the one this CPU runs (GCC's target_clones). The loops
// below are forced inline into each clone so that every copy is vectorised for its own target.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX512F__) && \
    !defined(__SANITIZE_ADDRESS__)
#define TILECC_PER_CPU \
  __attribute__((target_clones("arch=skylake-avx512", "arch=haswell", "default")))
#define TILECC_CLONED 1
#else
#define TILECC_PER_CPU
#endif
#define TILECC_INLINE [[gnu::always_inline]] inline
// A loop body passed to for_outer, inlined with it (a lambda is otherwise a function of its own,
// compiled for the baseline target whatever clone calls it).
#define TILECC_LOOP __attribute__((always_inline))

template <Mode mode>
TILECC_INLINE void update(double& d, double alpha, double s, double beta) {
  if constexpr (mode == Mode::overwrite)
    d = alpha * s;
  else if constexpr (mode == Mode::accumulate)
    d += alpha * s;
  else
    d = beta * d + alpha * s;
}

struct Layout {
  int rank = 0;
  extent_t extent[max_rank];      // destination order
  extent_t src_stride[max_rank];  // source stride of each destination axis
  extent_t dst_stride[max_rank];
};

// src_stride per source axis, dst_stride per destination axis.
Layout simplify(int rank, const extent_t* src_extents, const extent_t* src_stride, const Axes& axes,
                const extent_t* dst_stride) {
  Layout l;
  for (int j = 0; j < rank; ++j) {
    const int a = axes[static_cast<std::size_t>(j)];
    if (src_extents[a] == 1) continue;  // contributes nothing to either index
    // Fuse with the previous destination axis when it sits directly outside this one in both.
    if (l.rank > 0 && l.src_stride[l.rank - 1] == src_stride[a] * src_extents[a] &&
        l.dst_stride[l.rank - 1] == dst_stride[j] * src_extents[a]) {
      l.extent[l.rank - 1] *= src_extents[a];
      l.src_stride[l.rank - 1] = src_stride[a];
      l.dst_stride[l.rank - 1] = dst_stride[j];
      continue;
    }
    l.extent[l.rank] = src_extents[a];
    l.src_stride[l.rank] = src_stride[a];
    l.dst_stride[l.rank] = dst_stride[j];
    ++l.rank;
  }
  return l;
}

Layout simplify(int rank, const extent_t* src_extents, const Axes& axes) {
  extent_t src_stride[max_rank], dst_extents[max_rank], dst_stride[max_rank];
  dense_strides(rank, src_extents, src_stride);
  for (int j = 0; j < rank; ++j) dst_extents[j] = src_extents[axes[static_cast<std::size_t>(j)]];
  dense_strides(rank, dst_extents, dst_stride);
  return simplify(rank, src_extents, src_stride, axes, dst_stride);
}

// Calls body(src_offset, dst_offset) for every combination of the axes not in `skip`.
template <class Body>
TILECC_INLINE void for_outer(const Layout& l, int skip_a, int skip_b, Body&& body) {
  extent_t index[max_rank] = {};
  extent_t so = 0, dof = 0;
  for (;;) {
    body(so, dof);
    int j = l.rank - 1;
    for (; j >= 0; --j) {
      if (j == skip_a || j == skip_b) continue;
      so += l.src_stride[j];
      dof += l.dst_stride[j];
      if (++index[j] < l.extent[j]) break;
      so -= l.src_stride[j] * l.extent[j];
      dof -= l.dst_stride[j] * l.extent[j];
      index[j] = 0;
    }
    if (j < 0) return;
  }
}

template <Mode mode>
TILECC_INLINE void run(const Layout& l, double alpha, const double* __restrict src, double beta,
                       double* __restrict dst) {
  if (l.rank == 0) {
    update<mode>(dst[0], alpha, src[0], beta);
    return;
  }
  const int inner = l.rank - 1;
  if (l.dst_stride[inner] != 1) {
    // A view whose innermost destination axis is strided (only sub-blocks cut down to one
    // element along the block's innermost axis): element by element.
    const extent_t n = l.extent[inner], ss = l.src_stride[inner], ds = l.dst_stride[inner];
    for_outer(l, inner, -1, [&](extent_t so, extent_t dof) TILECC_LOOP {
      for (extent_t x = 0; x < n; ++x)
        update<mode>(dst[dof + x * ds], alpha, src[so + x * ss], beta);
    });
    return;
  }
  if (l.src_stride[inner] == 1) {
    const extent_t n = l.extent[inner];
    for_outer(l, inner, -1, [&](extent_t so, extent_t dof) TILECC_LOOP {
      const double* __restrict s = src + so;
      double* __restrict d = dst + dof;
      for (extent_t x = 0; x < n; ++x) update<mode>(d[x], alpha, s[x], beta);
    });
    return;
  }
  // The source-contiguous axis p (stride 1 in the source) is some outer destination axis.
  int p = 0;
  while (p < inner && l.src_stride[p] != 1) ++p;
  if (l.src_stride[p] != 1) {
    // No source-contiguous axis (a view cut down to one element along the source's innermost
    // axis): strided reads along the innermost destination axis.
    const extent_t n = l.extent[inner], ss = l.src_stride[inner];
    for_outer(l, inner, -1, [&](extent_t so, extent_t dof) TILECC_LOOP {
      for (extent_t x = 0; x < n; ++x) update<mode>(dst[dof + x], alpha, src[so + x * ss], beta);
    });
    return;
  }
  const extent_t np = l.extent[p], nq = l.extent[inner];
  const extent_t sq = l.src_stride[inner], dp = l.dst_stride[p];
  for_outer(l, p, inner, [&](extent_t so, extent_t dof) TILECC_LOOP {
    for (extent_t i0 = 0; i0 < np; i0 += transpose_tile) {
      const extent_t i1 = std::min(np, i0 + transpose_tile);
      for (extent_t j0 = 0; j0 < nq; j0 += transpose_tile) {
        const extent_t j1 = std::min(nq, j0 + transpose_tile);
        for (extent_t i = i0; i < i1; ++i) {
          const double* __restrict s = src + so + i;
          double* __restrict d = dst + dof + i * dp;
          for (extent_t j = j0; j < j1; ++j) update<mode>(d[j], alpha, s[j * sq], beta);
        }
      }
    }
  });
}

TILECC_PER_CPU void permute_layout(const Layout& l, double alpha, const double* src, double beta,
                                   double* dst) {
  if (beta == 0.0)
    run<Mode::overwrite>(l, alpha, src, beta, dst);
  else if (beta == 1.0)
    run<Mode::accumulate>(l, alpha, src, beta, dst);
  else
    run<Mode::general>(l, alpha, src, beta, dst);
}

// permute_loops for one rank, so that its two loops over the axes unroll.
template <int rank>
PermuteLoops dense_loops(const extent_t* src_extents, const Axes& axes) {
  // What simplify() makes of a dense block, in closed form: the inspector prices a permutation
  // for every product it plans and needs only these counts, not the strided layout. With dense
  // strides a destination axis fuses with the one before it exactly when it follows that one in
  // the source with only extent-1 axes between, and the innermost run is contiguous when only
  // extent-1 axes follow it in the source.
  PermuteLoops p;
  unsigned long_axes = 0;  // bit k: source axis k has an extent above 1
  p.elements = 1;
  for (int k = 0; k < rank; ++k) {
    p.elements *= src_extents[k];
    long_axes |= static_cast<unsigned>(src_extents[k] != 1) << k;
  }
  if (p.elements == 0) return p;
  extent_t outer = 1, inner = 1;  // elements of the fused axes outside the innermost, and in it
  int last = -1;                  // source axis of the innermost destination axis kept so far
  for (int j = 0; j < rank; ++j) {
    const int a = axes[static_cast<std::size_t>(j)];
    if (src_extents[a] == 1) continue;
    // Source axes last+1..a-1, worked out only once an axis is kept (last >= 0): shifting by
    // a negative count would be undefined.
    if (p.fused_rank > 0 && a > last && (long_axes & ((1u << a) - 1) & ~((2u << last) - 1)) == 0) {
      inner *= src_extents[a];
      p.inner_axes |= 1u << a;
    } else {
      outer *= inner;
      inner = src_extents[a];
      p.inner_axes = 1u << a;
      ++p.fused_rank;
    }
    last = a;
  }
  if (p.fused_rank == 0) {
    p.inner_loops = 1;
    return p;
  }
  p.runs = (long_axes >> (last + 1)) == 0;
  p.inner_loops = inner_loops(p.runs, outer, inner);
  return p;
}

}  // namespace

extent_t dense_strides(int rank, const extent_t* extents, extent_t* strides) {
  extent_t s = 1;
  for (int k = rank - 1; k >= 0; --k) {
    strides[k] = s;
    s *= extents[k];
  }
  return s;
}

PermuteLoops permute_loops(int rank, const extent_t* src_extents, const Axes& axes) {
  // dense_loops for every rank 0..max_rank, indexed by rank (callers have checked it).
  static constexpr auto by_rank = []<std::size_t... r>(std::index_sequence<r...>) {
    return std::array{&dense_loops<static_cast<int>(r)>...};
  }(std::make_index_sequence<max_rank + 1>{});
  return by_rank[static_cast<std::size_t>(rank)](src_extents, axes);
}

void permute(int rank, const extent_t* src_extents, const Axes& axes, double alpha,
             const double* src, double beta, double* dst) {
  for (int k = 0; k < rank; ++k)
    if (src_extents[k] == 0) return;
  permute_layout(simplify(rank, src_extents, axes), alpha, src, beta, dst);
}

void permute_strided(int rank, const extent_t* src_extents, const extent_t* src_strides,
                     const Axes& axes, double alpha, const double* src, double beta, double* dst,
                     const extent_t* dst_strides) {
  for (int k = 0; k < rank; ++k)
    if (src_extents[k] == 0) return;
  permute_layout(simplify(rank, src_extents, src_strides, axes, dst_strides), alpha, src, beta,
                 dst);
}

const char* permute_kernel_name() {
#ifdef TILECC_CLONED
  // The clone the loader picks, as GCC's resolver picks it (by the CPU's features).
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "fused-axes + 16x16 tiled transpose (C++20, auto-vectorised; AVX-512 copy, chosen at "
           "run time)";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "fused-axes + 16x16 tiled transpose (C++20, auto-vectorised; AVX2 copy, chosen at run "
           "time)";
  return "fused-axes + 16x16 tiled transpose (C++20, auto-vectorised; baseline x86-64 copy)";
#else
  return "fused-axes + 16x16 tiled transpose (C++20, auto-vectorised for the build's target)";
#endif
}

}  // namespace tilecc::kernels
