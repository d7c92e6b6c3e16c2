// The reference twin of kernels/permute.cpp: one odometer over the destination, no blocking.
#include "tilecc/kernels/permute.hpp"

namespace tilecc::kernels {

void permute_reference(int rank, const extent_t* src_extents, const Axes& axes, double alpha,
                       const double* src, double beta, double* dst) {
  extent_t src_stride[max_rank];
  extent_t dst_extent[max_rank];
  extent_t total = 1;
  for (int k = rank - 1; k >= 0; --k) {
    src_stride[k] = total;
    total *= src_extents[k];
  }
  for (int j = 0; j < rank; ++j) dst_extent[j] = src_extents[axes[static_cast<std::size_t>(j)]];
  extent_t index[max_rank] = {};
  for (extent_t d = 0; d < total; ++d) {
    extent_t s = 0;
    for (int j = 0; j < rank; ++j) s += index[j] * src_stride[axes[static_cast<std::size_t>(j)]];
    dst[d] = (beta == 0.0 ? 0.0 : beta * dst[d]) + alpha * src[s];
    for (int j = rank - 1; j >= 0 && ++index[j] == dst_extent[j]; --j) index[j] = 0;
  }
}

}  // namespace tilecc::kernels
