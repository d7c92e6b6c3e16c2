#include "tilecc/network.hpp"

#include <sys/prctl.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "tilecc/error.hpp"

namespace tilecc {
namespace {

// A non-negative number from the environment, or `unset` where the variable is absent or empty.
double read_setting(const char* name, const char* unit, double unset) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return unset;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  TILECC_CHECK(end != text && *end == '\0' && std::isfinite(value) && value >= 0.0, name, "=", text,
               " is not a non-negative number of ", unit, "; set it to one (e.g. ", name,
               "=20) or unset it to run without network emulation.");
  return value;
}

}  // namespace

NetworkEmulation::NetworkEmulation(double latency_seconds, double bytes_per_second)
    : latency_(latency_seconds),
      seconds_per_byte_(bytes_per_second > 0.0 ? 1.0 / bytes_per_second : 0.0) {}

NetworkEmulation NetworkEmulation::from_environment() {
  const double latency_us = read_setting("TILECC_NET_LATENCY_US", "microseconds", 0.0);
  const double gbps = read_setting("TILECC_NET_GBPS", "gigabytes per second", 0.0);
  return {latency_us * 1e-6, gbps * 1e9};
}

void NetworkEmulation::delay(std::int64_t bytes) const {
  if (!on()) return;
  // Linux lets a sleep overrun by its timer slack (50 us by default): as much as the latency
  // emulated. This thread asks for 1 us.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  const double seconds = latency_ + static_cast<double>(bytes) * seconds_per_byte_;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

std::string NetworkEmulation::describe() const {
  if (!on()) return "off";
  std::ostringstream out;
  out << latency_ * 1e6 << " us latency, ";
  if (seconds_per_byte_ > 0.0)
    out << 1e-9 / seconds_per_byte_ << " GB/s";
  else
    out << "unlimited bandwidth";
  out << " between nodes (emulated)";
  return out.str();
}

}  // namespace tilecc
