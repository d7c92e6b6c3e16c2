#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tilecc/correction.hpp"

using namespace tilecc;

TEST(ModelCorrector, StartsAsTheIdentity) {
  const ModelCorrector corrector;
  EXPECT_EQ(corrector.correction().scale, 1.0);
  EXPECT_EQ(corrector.correction().overhead, 0.0);
}

TEST(ModelCorrector, RecoversAScaleAndAnOverheadExactly) {
  // Tasks that take exactly 0.6 * predicted + 2e-7 s: the fit has no residual.
  std::vector<double> predicted, measured;
  for (int t = 1; t <= 50; ++t) {
    predicted.push_back(1e-7 * t * t);
    measured.push_back(0.6 * predicted.back() + 2e-7);
  }
  ModelCorrector corrector;
  corrector.observe(predicted, measured);
  EXPECT_NEAR(corrector.correction().scale, 0.6, 1e-9);
  EXPECT_NEAR(corrector.correction().overhead, 2e-7, 1e-15);
  EXPECT_EQ(corrector.tasks(), 50);
}

TEST(ModelCorrector, FitsTheScaleAloneWhenTheOverheadWouldBeNegative) {
  std::vector<double> predicted, measured;
  for (int t = 1; t <= 20; ++t) {
    predicted.push_back(1e-6 * t);
    measured.push_back(2.0 * predicted.back() - 1e-7);  // a negative overhead is not physical
  }
  ModelCorrector corrector;
  corrector.observe(predicted, measured);
  EXPECT_EQ(corrector.correction().overhead, 0.0);
  EXPECT_GT(corrector.correction().scale, 1.5);
  EXPECT_LT(corrector.correction().scale, 2.0);
}

TEST(ModelCorrector, FollowsAMachineThatSlowsDown) {
  std::vector<double> predicted(200), fast(200), slow(200);
  for (int t = 0; t < 200; ++t) {
    predicted[static_cast<std::size_t>(t)] = 1e-6 * (1 + t % 7);
    fast[static_cast<std::size_t>(t)] = predicted[static_cast<std::size_t>(t)];
    slow[static_cast<std::size_t>(t)] = 3.0 * predicted[static_cast<std::size_t>(t)];
  }
  ModelCorrector corrector;
  corrector.observe(predicted, fast);
  EXPECT_NEAR(corrector.correction().scale, 1.0, 1e-9);
  // Old runs fade by e^-1 per memory_tasks tasks: after many slow runs the fast one is forgotten.
  for (int run = 0; run < 60; ++run) corrector.observe(predicted, slow);
  EXPECT_NEAR(corrector.correction().scale, 3.0, 1e-3);
}

TEST(ModelCorrector, IgnoresTasksWithoutAMeasurementAndRefusesMismatchedRuns) {
  ModelCorrector corrector;
  const std::vector<double> predicted{1e-6, 2e-6}, unmeasured{0.0, 0.0};
  corrector.observe(predicted, unmeasured);
  EXPECT_EQ(corrector.tasks(), 0);
  EXPECT_EQ(corrector.correction().scale, 1.0);
  const std::vector<double> one{1e-6};
  EXPECT_THROW(corrector.observe(predicted, one), std::exception);
}
