#pragma once
/** @file The machine's NUMA domains and the CPUs of each, as Linux lists them
 * (/sys/devices/system/node/nodeN/cpulist), and which domain a worker belongs to: workers are
 * split into contiguous groups, one per domain (the `buckets` policy's default groups, and where
 * the executor pins its pool threads when there are several domains, so that each worker's
 * first-touched scratch stays on its node). */
#include <string>
#include <vector>

namespace tilecc {

struct NumaDomains {
  /** Per domain, its CPUs; empty where Linux tells nothing (no sysfs). */
  std::vector<std::vector<int>> cpus;

  /** Read once per process. */
  static const NumaDomains& system();
  /** "0-3,8,10-11" -> {0, 1, 2, 3, 8, 10, 11}; throws on text that is not a CPU list. */
  static std::vector<int> parse_cpulist(const std::string& text);
  int count() const { return static_cast<int>(cpus.size()); }
  /** Workers per domain's group: ceil(workers / domains), at least 1. */
  int group_size(int workers) const;
  /** The domain of `worker` among `workers`: the group it falls in. */
  int domain_of(int worker, int workers) const;
};

}  // namespace tilecc
