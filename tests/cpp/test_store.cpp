// MemoryStore and MappingCache: a store starts zeroed, also when it takes a mapping another store
// freed, and the cache never holds more than its limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tilecc/error.hpp"
#include "tilecc/mappings.hpp"
#include "tilecc/store.hpp"

namespace tilecc {
namespace {

constexpr std::size_t kib = 1024;

double* fill(void* mapping, std::size_t bytes, double value) {
  auto* p = static_cast<double*>(mapping);
  std::fill(p, p + bytes / sizeof(double), value);
  return p;
}

bool all_zero(const double* p, std::size_t count) {
  return std::all_of(p, p + count, [](double x) { return x == 0.0; });
}

TEST(MappingCache, TakesBackAFreedMappingZeroed) {
  MappingCache cache(1024 * kib);
  const std::size_t bytes = 256 * kib;
  double* first = fill(cache.take(bytes), bytes, 3.0);
  cache.give(first, bytes);
  EXPECT_EQ(cache.held_bytes(), bytes);
  void* again = cache.take(bytes);
  EXPECT_EQ(again, first);  // the same pages, not a new mapping
  EXPECT_EQ(cache.held_bytes(), 0u);
  EXPECT_TRUE(all_zero(static_cast<double*>(again), bytes / sizeof(double)));
  cache.give(again, bytes);
}

TEST(MappingCache, TakesOnlyTheSizeAskedFor) {
  MappingCache cache(1024 * kib);
  void* small = cache.take(128 * kib);
  cache.give(small, 128 * kib);
  void* large = cache.take(256 * kib);
  EXPECT_NE(large, small);
  EXPECT_EQ(cache.held_bytes(), 128 * kib);  // the smaller one is still held
  cache.give(large, 256 * kib);
  EXPECT_EQ(cache.held_bytes(), 384 * kib);
}

TEST(MappingCache, GivesBackTheOldestPastItsLimit) {
  const std::size_t bytes = 128 * kib;
  MappingCache cache(3 * bytes);
  std::vector<void*> mappings;
  for (int i = 0; i < 4; ++i) mappings.push_back(fill(cache.take(bytes), bytes, i + 1.0));
  for (void* m : mappings) cache.give(m, bytes);
  EXPECT_EQ(cache.held_bytes(), 3 * bytes);
  // The three given back last are held, newest first; the first was unmapped.
  for (int i = 3; i >= 1; --i) EXPECT_EQ(cache.take(bytes), mappings[static_cast<std::size_t>(i)]);
  EXPECT_EQ(cache.held_bytes(), 0u);
  for (int i = 1; i < 4; ++i) cache.give(mappings[static_cast<std::size_t>(i)], bytes);
  // A mapping larger than the whole limit is unmapped, and the ones held stay.
  cache.give(cache.take(4 * bytes), 4 * bytes);
  EXPECT_EQ(cache.held_bytes(), 3 * bytes);
  cache.release();
  EXPECT_EQ(cache.held_bytes(), 0u);
}

TEST(MappingCache, ARefusedMappingSaysHowMuchAndWhatToDo) {
  MappingCache cache(kib);
  const std::size_t bytes = std::size_t{1} << 62;  // beyond any address space
  try {
    cache.take(bytes);
    FAIL() << "a mapping of 2^62 bytes was granted";
  } catch (const OutOfMemory& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("4398046511104 MiB for a tensor's blocks"), std::string::npos)
        << message;
    EXPECT_NE(message.find("make the calculation smaller"), std::string::npos) << message;
  }
  EXPECT_EQ(cache.held_bytes(), 0u);
}

TEST(MemoryStore, StartsZeroedOnAMappingAnotherStoreFreed) {
  // 16^4 doubles (512 KiB): a mapped store.
  std::vector<Orbital> orbitals(16);
  auto space = std::make_shared<IndexSpace>(orbitals, 8);
  const BlockShape shape({space, space, space, space}, PermutationGroup(4));
  const std::size_t count = static_cast<std::size_t>(MemoryStore(shape).storage_doubles());
  const double* freed = nullptr;
  {
    MemoryStore store(shape);
    EXPECT_TRUE(all_zero(store.block(0), count));
    std::fill(store.block(0), store.block(0) + count, 7.0);
    freed = store.block(0);
  }
  MemoryStore store(shape);
  EXPECT_EQ(store.block(0), freed);  // the process cache handed the freed mapping on
  EXPECT_TRUE(all_zero(store.block(0), count));
}

}  // namespace
}  // namespace tilecc
