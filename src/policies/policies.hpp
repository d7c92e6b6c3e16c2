#pragma once
// The built-in scheduling policies, one file each; sched.cpp registers them by name.
#include <algorithm>
#include <atomic>
#include <memory>
#include <span>

#include "tilecc/sched.hpp"

namespace tilecc::policies {

/** The next `quantum` tasks of `tasks` from a shared counter (NXTVAL): empty once it is spent. */
inline std::span<const task_id_t> take_quantum(std::span<const task_id_t> tasks,
                                               std::atomic<task_id_t>& counter, task_id_t quantum) {
  const auto size = static_cast<task_id_t>(tasks.size());
  const task_id_t begin = counter.fetch_add(quantum, std::memory_order_relaxed);
  if (begin >= size) return {};
  const task_id_t end = std::min(begin + quantum, size);
  return tasks.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
}

std::unique_ptr<SchedulePolicy> make_tce(const PolicyOptions& options);
std::unique_ptr<SchedulePolicy> make_counter(const PolicyOptions& options);
std::unique_ptr<SchedulePolicy> make_static_block(const PolicyOptions& options);
std::unique_ptr<SchedulePolicy> make_static_lpt(const PolicyOptions& options);
std::unique_ptr<SchedulePolicy> make_buckets(const PolicyOptions& options);
std::unique_ptr<SchedulePolicy> make_steal(const PolicyOptions& options);

}  // namespace tilecc::policies
