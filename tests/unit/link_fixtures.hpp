#pragma once
// Link parameter sets used across the unit tests: known truth for the virtual network.

#include <cstdint>

#include "model/link_params.hpp"

namespace commgauge::testing {

/// Plain LogGP: o_s = o_r, no per-byte overheads, one range.
inline model::LinkParams loggp_link(double L = 5.0, double o = 1.5, double g = 4.0,
                                    double G = 0.001) {
  model::LinkParams link;
  link.latency_us = L;
  model::LinkRange r;
  r.from_bytes = 1;
  r.send_overhead_us = o;
  r.recv_overhead_us = o;
  r.gap_us = g;
  r.gap_per_byte_us = G;
  link.ranges = {r};
  return link;
}

/// LogGPS: o_s != o_r, per-byte overheads, an eager range and a rendezvous range from 12289 B
/// (seed 000 Table 2's switch), with the given progress for the rendezvous range.
inline model::LinkParams loggps_link(model::Progress progress) {
  model::LinkParams link;
  link.latency_us = 3.0;
  model::LinkRange eager;
  eager.from_bytes = 1;
  eager.send_overhead_us = 1.0;
  eager.recv_overhead_us = 1.4;
  eager.send_overhead_per_byte_us = 0.0002;
  eager.recv_overhead_per_byte_us = 0.0003;
  eager.gap_us = 2.0;
  eager.gap_per_byte_us = 0.0008;
  model::LinkRange rndv;
  rndv.from_bytes = 12289;
  rndv.send_overhead_us = 2.5;
  rndv.recv_overhead_us = 2.0;
  rndv.send_overhead_per_byte_us = 0.0001;
  rndv.recv_overhead_per_byte_us = 0.0001;
  rndv.gap_us = 6.0;
  rndv.gap_per_byte_us = 0.0008;  // the same wire: G does not change with the protocol
  rndv.rendezvous = true;
  rndv.progress = progress;
  link.ranges = {eager, rndv};
  return link;
}

/// Open MPI's shared memory in outline: a short eager range (Tm = T), an eager range from
/// 257 B whose sends complete on the receiver's acknowledgement (Tm = TA, with the given
/// progress and its own o'_s, o'_r), and a rendezvous range from 12289 B. L and the send
/// overlap omega as given.
inline model::LinkParams acknowledged_link(model::Progress progress, double L = 0.5,
                                           double omega = 0.0) {
  model::LinkParams link = loggps_link(progress);
  link.latency_us = L;
  link.send_overlap_us = omega;
  model::LinkRange ta = link.ranges[0];
  ta.from_bytes = 257;
  ta.send_overhead_us = 0.6;
  ta.recv_overhead_us = 0.9;
  ta.transfer = "TA";
  ta.progress = progress;
  ta.control_send_us = 0.3;
  ta.control_recv_us = 0.4;
  link.ranges.insert(link.ranges.begin() + 1, ta);
  return link;
}

/// Open MPI's shared memory as `profile` reads it: acknowledged_link(dependent) whose rendezvous
/// range from 12289 B the receiver pulls (DCP with Tm = RTA, Open MPI's RGET), with its own
/// o'_s and o'_r.
inline model::LinkParams pulled_link(double L = 0.5, double omega = 0.0) {
  model::LinkParams link = acknowledged_link(model::Progress::dependent, L, omega);
  model::LinkRange& rndv = link.ranges.back();
  rndv.transfer = "RTA";
  rndv.control_send_us = 0.35;
  rndv.control_recv_us = 0.45;
  return link;
}

/// loggps_link's eager range alone, then from `from_bytes` a level change: the same range with
/// o_s and o_r higher by the given amounts and the same per-byte costs.
inline model::LinkParams leveled_link(std::uint64_t from_bytes, double more_o_s_us,
                                      double more_o_r_us) {
  model::LinkParams link = loggps_link(model::Progress::independent);
  link.ranges.resize(1);
  model::LinkRange level = link.ranges[0];
  level.from_bytes = from_bytes;
  level.send_overhead_us += more_o_s_us;
  level.recv_overhead_us += more_o_r_us;
  link.ranges.push_back(level);
  return link;
}

}  // namespace commgauge::testing
