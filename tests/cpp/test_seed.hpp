#pragma once
// The seed of a randomised test: random each run, so that runs cover new cases, and printed, so
// that a failure can be replayed with TILECC_TEST_SEED=<seed>.
#include <cstdlib>
#include <random>
#include <string>

namespace tilecc {

inline unsigned test_seed() {
  if (const char* s = std::getenv("TILECC_TEST_SEED")) return static_cast<unsigned>(std::atoi(s));
  return std::random_device{}();
}

/** What a failing test prints with its message (through SCOPED_TRACE). */
inline std::string replay_note(unsigned seed) {
  return "seed " + std::to_string(seed) + " (replay with TILECC_TEST_SEED)";
}

}  // namespace tilecc
