#pragma once
// One packed block of a (T) kernel's W-like array as a weighted sum of its transposes: the target
// is walked in cache-sized tiles so that a transposed source's strided reads stay within a few
// cache lines.
#include <algorithm>
#include <array>

#include "tilecc/cost.hpp"
#include "tilecc/types.hpp"

namespace tilecc::kernels::detail {

/** Where element (a, b, c) of the target block sits in one source: base + a*sa + b*sb + c*sc. */
struct SourceView {
  const double* base;
  extent_t sa, sb, sc;
  double weight;
};

/** out[a * out_sa + b * nc + c] = sum over the sources of weight * source(a, b, c), for a block
 *  of na x nb x nc whose rows of b and c are contiguous (out_sa = nb * nc in a dense block); with
 *  Accumulate, out += that sum. */
template <std::size_t N, bool Accumulate = false>
void permuted_block_sum(double* out, extent_t out_sa, extent_t na, extent_t nb, extent_t nc,
                        const std::array<SourceView, N>& sources) {
  constexpr extent_t tile = 16;
  for (extent_t a0 = 0; a0 < na; a0 += tile)
    for (extent_t b0 = 0; b0 < nb; b0 += tile)
      for (extent_t c0 = 0; c0 < nc; c0 += tile) {
        const extent_t a1 = std::min(na, a0 + tile), b1 = std::min(nb, b0 + tile);
        const extent_t c1 = std::min(nc, c0 + tile);
        for (extent_t a = a0; a < a1; ++a)
          for (extent_t b = b0; b < b1; ++b) {
            double* row = out + a * out_sa + b * nc;
            if constexpr (!Accumulate)
              for (extent_t c = c0; c < c1; ++c) row[c] = 0.0;
            for (const SourceView& v : sources) {
              const double* in = v.base + a * v.sa + b * v.sb;
              if (v.sc == 1)
                for (extent_t c = c0; c < c1; ++c) row[c] += v.weight * in[c];
              else
                for (extent_t c = c0; c < c1; ++c) row[c] += v.weight * in[c * v.sc];
            }
          }
      }
}

/** The cost model's price of a pass over `elements` elements in `runs` contiguous runs that
 *  reads `strided` arrays through strides and makes `in_order` contiguous reads or writes per
 *  element. A permutation moves each element once, one read and one write: a copy both in order,
 *  a transpose one strided; the model's rates for those two give each kind of access its price.
 */
inline double pass_seconds(const CostModel& model, extent_t elements, int strided, int in_order,
                           extent_t runs) {
  const double copy = model.permute[1], transpose = model.permute[3];
  const double per_element = strided * (transpose - copy / 2) + in_order * copy / 2;
  return model.permute[0] + per_element * static_cast<double>(elements) +
         model.permute[4] * static_cast<double>(runs);
}

}  // namespace tilecc::kernels::detail
