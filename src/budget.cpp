#include "tilecc/budget.hpp"

#include <cstdio>
#include <iterator>
#include <string>

#include "tilecc/error.hpp"

namespace tilecc {
namespace {

// Bytes in the largest binary unit that leaves at least 1 of it.
std::string size_text(std::int64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  auto value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(units)) {
    value /= 1024.0;
    ++unit;
  }
  char text[48];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

}  // namespace

MemoryBudget::MemoryBudget(std::int64_t limit_bytes) : limit_(limit_bytes) {
  TILECC_CHECK(limit_bytes >= 0, "a memory budget is a number of bytes >= 0 (0: none), got ",
               limit_bytes, ".");
}

void MemoryBudget::reserve(std::int64_t bytes, const char* what) {
  std::int64_t held = used_.load(std::memory_order_relaxed);
  for (;;) {
    TILECC_CHECK(limit_ == 0 || held + bytes <= limit_, "the tensors of this job would hold ",
                 size_text(held + bytes), ", over the memory budget of ", size_text(limit_), " (",
                 size_text(held), " held, ", size_text(bytes), " more for ", what,
                 "); raise the memory budget, or spread the job over more ranks.");
    if (used_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed)) break;
  }
  std::int64_t peak = high_water_.load(std::memory_order_relaxed);
  while (held + bytes > peak &&
         !high_water_.compare_exchange_weak(peak, held + bytes, std::memory_order_relaxed)) {
  }
}

}  // namespace tilecc
