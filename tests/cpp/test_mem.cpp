// Per-worker scratch: pooled buffers allocate only when a request outgrows them; per-task ones on
// every request (what the allocator comparison runs); both count their allocations and keep their
// largest size. The mode comes from $TILECC_SCRATCH_ALLOCATION, a bad value refused in one
// sentence. Workers fall into NUMA domains in contiguous groups, the domains' CPUs read from
// Linux's lists.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "tilecc/exec.hpp"
#include "tilecc/mem.hpp"
#include "tilecc/numa.hpp"

namespace tilecc {
namespace {

TEST(Scratch, PooledBuffersAllocateOnlyToGrow) {
  ScratchBuffer buffer;
  for (const extent_t n : {10, 5, 10, 100, 7, 100}) {
    double* p = buffer.get(n);
    for (extent_t i = 0; i < n; ++i) p[i] = 1.0;  // writable, as ASan checks
  }
  EXPECT_EQ(buffer.allocations(), 2);  // 10, then 100
  EXPECT_EQ(buffer.frees(), 1);        // the 10
  EXPECT_EQ(buffer.capacity(), 100);
  EXPECT_EQ(buffer.high_water(), 100);
}

TEST(Scratch, PerTaskBuffersAllocateOnEveryRequest) {
  ScratchBuffer buffer(ScratchMode::per_task);
  for (const extent_t n : {10, 5, 10, 100, 7}) {
    double* p = buffer.get(n);
    for (extent_t i = 0; i < n; ++i) p[i] = 1.0;
  }
  buffer.get(0);  // nothing asked, nothing allocated
  EXPECT_EQ(buffer.allocations(), 5);
  EXPECT_EQ(buffer.frees(), 4);  // the last is still held
  EXPECT_EQ(buffer.capacity(), 7);
  EXPECT_EQ(buffer.high_water(), 100);
  Workspace ws(ScratchMode::per_task);
  ws.a.get(3), ws.r.get(4), ws.r.get(2);
  EXPECT_EQ(ws.allocations(), 3);
  EXPECT_EQ(ws.high_water_bytes(), static_cast<extent_t>(sizeof(double)) * (3 + 4));
}

TEST(Scratch, TheModeComesFromTheEnvironment) {
  ::setenv("TILECC_SCRATCH_ALLOCATION", "per-task", 1);
  EXPECT_EQ(Executor(2).scratch_mode(), ScratchMode::per_task);
  ::setenv("TILECC_SCRATCH_ALLOCATION", "pools", 1);
  try {
    Executor refused(1);
    FAIL() << "a bad TILECC_SCRATCH_ALLOCATION was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("set it to 'pooled'"), std::string::npos) << e.what();
  }
  ::unsetenv("TILECC_SCRATCH_ALLOCATION");
  EXPECT_EQ(Executor(1).scratch_mode(), ScratchMode::pooled);
}

}  // namespace
}  // namespace tilecc

namespace tilecc {
namespace {

TEST(Numa, CpuListsAndWorkerDomains) {
  EXPECT_EQ(NumaDomains::parse_cpulist("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(NumaDomains::parse_cpulist(""), std::vector<int>{});
  EXPECT_THROW(NumaDomains::parse_cpulist("3-1"), std::invalid_argument);
  EXPECT_THROW(NumaDomains::parse_cpulist("a"), std::invalid_argument);
  // Two domains, 6 workers: groups of 3, workers 0-2 on domain 0, 3-5 on domain 1; 5 workers:
  // groups of 3 and 2.
  const NumaDomains two{{{0, 1, 2, 3}, {4, 5, 6, 7}}};
  EXPECT_EQ(two.group_size(6), 3);
  EXPECT_EQ(two.domain_of(2, 6), 0);
  EXPECT_EQ(two.domain_of(3, 6), 1);
  EXPECT_EQ(two.domain_of(4, 5), 1);
  const NumaDomains none{};
  EXPECT_EQ(none.domain_of(7, 8), 0);
  EXPECT_EQ(none.group_size(8), 8);
  // This machine's, as Linux lists them: every domain has CPUs.
  for (const auto& cpus : NumaDomains::system().cpus) EXPECT_FALSE(cpus.empty());
}

}  // namespace
}  // namespace tilecc
