#pragma once
// The built-in scheduling policies, one file each; sched.cpp registers them by name.
#include <memory>

#include "tilecc/sched.hpp"

namespace tilecc::policies {

std::unique_ptr<SchedulePolicy> make_tce(const PolicyOptions& options);
std::unique_ptr<SchedulePolicy> make_counter(const PolicyOptions& options);
std::unique_ptr<SchedulePolicy> make_static_block(const PolicyOptions& options);
std::unique_ptr<SchedulePolicy> make_static_lpt(const PolicyOptions& options);
std::unique_ptr<SchedulePolicy> make_buckets(const PolicyOptions& options);
std::unique_ptr<SchedulePolicy> make_steal(const PolicyOptions& options);

}  // namespace tilecc::policies
