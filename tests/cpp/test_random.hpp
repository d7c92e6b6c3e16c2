#pragma once
// The randomness of a randomised test: a seed that is random each run, so that runs cover new
// cases, and shown with every failure of the test (a gtest scoped trace), so that the failure can
// be replayed with TILECC_TEST_SEED=<seed>. Make one at the top of the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include "tilecc/types.hpp"

namespace tilecc {

class TestRandom {
 public:
  TestRandom()
      : seed_(first_seed()),
        trace_(__FILE__, __LINE__,
               "seed " + std::to_string(seed_) + " (replay with TILECC_TEST_SEED)"),
        engine_(seed_) {}
  TestRandom(const TestRandom&) = delete;
  TestRandom& operator=(const TestRandom&) = delete;

  /** A whole number in [lo, hi]. */
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(engine_); }
  /** Axes whose first `rank` are a random permutation of 0..rank-1, the others in place. */
  Axes axes(int rank) {
    Axes axes{};
    std::iota(axes.begin(), axes.end(), std::int8_t{0});
    std::shuffle(axes.begin(), axes.begin() + rank, engine_);
    return axes;
  }
  std::mt19937& engine() { return engine_; }

 private:
  static unsigned first_seed() {
    const char* text = std::getenv("TILECC_TEST_SEED");
    if (text == nullptr) return std::random_device{}();
    // A seed mistyped would otherwise replay seed 0 in silence, not the failure asked for.
    unsigned seed = 0;
    const char* end = text + std::strlen(text);
    const auto [last, error] = std::from_chars(text, end, seed);
    if (error != std::errc{} || last != end || last == text)
      throw std::invalid_argument(std::string("TILECC_TEST_SEED is '") + text +
                                  "', not a seed; give the number a failed test printed.");
    return seed;
  }

  unsigned seed_;
  testing::ScopedTrace trace_;
  std::mt19937 engine_;
};

}  // namespace tilecc
