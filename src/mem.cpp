#include "tilecc/mem.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "detail/checked.hpp"
#include "tilecc/error.hpp"

namespace tilecc {

ScratchMode scratch_mode_from_environment() {
  const char* text = std::getenv("TILECC_SCRATCH_ALLOCATION");
  const std::string mode = text != nullptr ? text : "";
  TILECC_CHECK(mode.empty() || mode == "pooled" || mode == "per-task",
               "TILECC_SCRATCH_ALLOCATION is '", mode,
               "'; set it to 'pooled' (the default) or 'per-task', or unset it.");
  return mode == "per-task" ? ScratchMode::per_task : ScratchMode::pooled;
}

double* ScratchBuffer::get(extent_t n) {
  if (n > capacity_ || (mode_ == ScratchMode::per_task && n > 0)) {
    const auto bytes = detail::checked_product<std::size_t>(
        static_cast<std::size_t>(n / 8 + (n % 8 != 0 ? 1 : 0)) * 8, sizeof(double),
        "a worker's scratch buffer in bytes");
    if (data_) ++frees_;
    data_.reset();  // per task: freed before the next allocation, as a task's free would be
    void* p = std::aligned_alloc(64, bytes);
    if (p == nullptr) throw OutOfMemory(bytes, "a worker's scratch buffer");
    data_.reset(static_cast<double*>(p));
    capacity_ = n;
    high_water_ = std::max(high_water_, n);
    ++allocations_;
  }
  return data_.get();
}

}  // namespace tilecc
