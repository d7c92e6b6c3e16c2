#pragma once
/** @file An emulated network between virtual nodes: on one machine every transfer between ranks
 * is a memory copy, so a remote get costs nothing that overlapping could hide. With
 * TILECC_NET_LATENCY_US and TILECC_NET_GBPS set, a transfer to or from another (virtual) node
 * takes the latency plus its bytes over the bandwidth before it completes, as on a cluster's
 * network; transfers issued together and completed together (one flush) pay the latency once,
 * which is how overlapping helps there too. Off unless set. */
#include <cstdint>
#include <string>

namespace tilecc {

class NetworkEmulation {
 public:
  /** Off. */
  NetworkEmulation() = default;
  NetworkEmulation(double latency_seconds, double bytes_per_second);
  /** From TILECC_NET_LATENCY_US (microseconds) and TILECC_NET_GBPS (gigabytes per second, 0 or
   *  unset: unlimited); both unset: off. Refuses values that are negative or not numbers. */
  static NetworkEmulation from_environment();

  bool on() const { return latency_ > 0.0 || seconds_per_byte_ > 0.0; }
  /** Waits as long as `bytes` moved between nodes in one go would take (latency once);
   *  nothing when off. The thread sleeps (the network is busy, not the CPU). */
  void delay(std::int64_t bytes) const;
  /** "off", or the latency and bandwidth, for traces and reports. */
  std::string describe() const;

 private:
  double latency_ = 0.0, seconds_per_byte_ = 0.0;
};

}  // namespace tilecc
