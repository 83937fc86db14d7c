#include "model/models.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge::model {

LinkParams to_link(const LogGP& p) {
  LinkParams link;
  link.latency_us = p.latency_us;
  for (const auto& r : p.ranges) {
    LinkRange lr;
    lr.from_bytes = r.from_bytes;
    lr.send_overhead_us = r.overhead_us;
    lr.recv_overhead_us = r.overhead_us;
    lr.gap_us = r.gap_us;
    lr.gap_per_byte_us = r.gap_per_byte_us;
    link.ranges.push_back(lr);
  }
  return link;
}

LinkParams to_link(const LogGPS& p) {
  if (p.short_bytes > p.rendezvous_bytes && p.rendezvous_bytes > 0) {
    throw InputError("LogGPS: s must not be above S");
  }
  LinkParams link;
  link.latency_us = p.latency_us;
  LinkRange shorts;
  shorts.from_bytes = 1;
  shorts.send_overhead_us = shorts.recv_overhead_us = p.overhead_us;
  shorts.send_overhead_per_byte_us = p.send_per_byte_short_us;
  shorts.recv_overhead_per_byte_us = p.recv_per_byte_short_us;
  shorts.gap_per_byte_us = p.gap_per_byte_short_us;
  LinkRange longs = shorts;
  longs.send_overhead_per_byte_us = p.send_per_byte_long_us;
  longs.recv_overhead_per_byte_us = p.recv_per_byte_long_us;
  longs.gap_per_byte_us = p.gap_per_byte_long_us;
  if (p.short_bytes > 1) link.ranges.push_back(shorts);
  if (p.rendezvous_bytes == 0 || p.short_bytes < p.rendezvous_bytes) {
    longs.from_bytes = std::max<std::uint64_t>(p.short_bytes, 1);
    link.ranges.push_back(longs);
  }
  if (p.rendezvous_bytes > 0) {
    LinkRange rndv = longs;
    rndv.from_bytes = p.rendezvous_bytes;
    rndv.rendezvous = true;
    link.ranges.push_back(rndv);
  }
  return link;
}

bool loggpo_combination_supported(Progress scp, TransferMechanism tm) {
  // Seed 001's two, and DCP with RTA (the receiver pulls, then a FIN: docs/models.md).
  return (scp == Progress::dependent && tm == TransferMechanism::RAT) ||
         (scp == Progress::dependent && tm == TransferMechanism::RTA) ||
         (scp == Progress::independent && tm == TransferMechanism::RTA);
}

TransferMechanism implied_mechanism(const LinkRange& r) {
  if (!r.rendezvous) return TransferMechanism::T;
  return r.progress == Progress::dependent ? TransferMechanism::RAT : TransferMechanism::RTA;
}

LinkParams to_link(const LogGPO& p) {
  if (!loggpo_combination_supported(p.progress, p.mechanism)) {
    throw InputError(fmt::format(
        "LogGPO: Scp = {} with Tm = {} has no formulas (seed 001's DCP with RAT and ICP with RTA, "
        "and DCP with RTA); it is rejected, not guessed",
        p.progress == Progress::dependent ? "DCP" : "ICP", to_string(p.mechanism)));
  }
  LinkParams link;
  link.latency_us = p.latency_us;
  LinkRange eager;
  eager.from_bytes = 1;
  eager.send_overhead_us = p.init_us;
  eager.send_overhead_per_byte_us = p.init_per_byte_us;
  eager.recv_overhead_us = p.copy_us;
  eager.recv_overhead_per_byte_us = p.copy_per_byte_us;
  eager.gap_per_byte_us = p.gap_per_byte_us;
  if (p.rendezvous_bytes != 1) link.ranges.push_back(eager);
  if (p.rendezvous_bytes > 0) {
    LinkRange rndv = eager;
    rndv.from_bytes = p.rendezvous_bytes;
    rndv.rendezvous = true;
    rndv.progress = p.progress;
    rndv.transfer = to_string(p.mechanism);
    rndv.control_send_us = rndv.control_recv_us = p.control_us;
    link.ranges.push_back(rndv);
  }
  return link;
}

namespace {

// ---- the registry: every model once, with its view of a link --------------------------------

// loggp: plain LogGP (seed 000): the range's LoggpView where the link has one, no per-byte
// overheads, no rendezvous hand-shake, no o_u, no o_x, no G_st (its G is the whole gap), billed by
// the byte.
LinkParams loggp_view(LinkParams view) {
  for (auto& r : view.ranges) {
    if (r.loggp.o_s_us >= 0) r.send_overhead_us = r.loggp.o_s_us;
    if (r.loggp.o_r_us >= 0) r.recv_overhead_us = r.loggp.o_r_us;
    if (r.loggp.g_us >= 0) r.gap_us = r.loggp.g_us;
    if (r.loggp.G_us_per_byte >= 0) r.gap_per_byte_us = r.loggp.G_us_per_byte;
    r.send_overhead_per_byte_us = r.recv_overhead_per_byte_us = 0;
    r.unexpected_recv_us = 0;  // LogGP's receive costs o_r, whenever its data came
    r.crossing_recv_us = 0;    // and whatever else is under way
    r.crossing_recv_per_byte_us = 0;
    r.stream_gap_per_byte_us = 0;
    r.page_bytes = 0;
    r.rendezvous = false;
    r.transfer.clear();  // no acknowledgement either (Tm = T)
    r.control_send_us = r.control_recv_us = -1;
    // The view's own o_s may be below the link's send overlap: a message never precedes its send.
    view.send_overlap_us = std::min(view.send_overlap_us, r.send_overhead_us);
  }
  return view;
}

// loggps: the link as it is, its rendezvous progressing independently (LogGPS does not model
// overlap). An eager range's acknowledgement (Tm = TA) and a pulled rendezvous (DCP with RTA),
// which LogGPS lacks, keep their measured progress: their messages are a different sequence
// (the receiver pays o'_s for the ack or FIN, and starts a pull, on its own CPU inside a call).
LinkParams loggps_view(LinkParams view) {
  for (auto& r : view.ranges) {
    if (!r.acknowledged() && !r.pulled()) r.progress = Progress::independent;
  }
  return view;
}

// loggpo: the link as it is, progress per range and the transfer mechanism it implies; only
// seed 001's two combinations have formulas.
LinkParams loggpo_view(LinkParams view) {
  for (const auto& r : view.ranges) {
    if (!r.rendezvous || r.transfer.empty()) continue;
    const TransferMechanism tm = transfer_mechanism_from_string(r.transfer);
    if (!loggpo_combination_supported(r.progress, tm)) {
      throw InputError(
          "model loggpo",
          fmt::format("the rendezvous range from {} B was measured with Scp = {} and Tm = {}: "
                      "LogGPO has formulas only for DCP with RAT or RTA and ICP with RTA, so it "
                      "cannot model this range",
                      r.from_bytes, r.progress == Progress::dependent ? "DCP" : "ICP", r.transfer));
    }
  }
  return view;
}

struct ModelEntry {
  ModelInfo info;
  LinkParams (*view)(LinkParams);
};

const std::vector<ModelEntry>& registry() {
  static const std::vector<ModelEntry> entries = {
      {{"loggp", "LogGP: constant overheads, gap and gap per byte; no protocol synchronisation",
        "Alexandrov et al. 1995; parameters as in seed 000 (Hoefler et al.), Table 2"},
       loggp_view},
      {{"loggps",
        "LogGPS: per-byte overheads, short/eager/rendezvous ranges, rendezvous hand-shake",
        "seed 004 (Ino et al.), Tables 3-6"},
       loggps_view},
      {{"loggpo",
        "LogGPO: LogGPS plus the progress strategy Scp and transfer mechanism Tm, which decide "
        "how much of a transfer overlaps computation",
        "seed 001 (LogGPO), §2.2"},
       loggpo_view},
  };
  return entries;
}

}  // namespace

const std::vector<ModelInfo>& model_infos() {
  static const std::vector<ModelInfo> infos = [] {
    std::vector<ModelInfo> out;
    for (const auto& e : registry())
      out.push_back(e.info);
    return out;
  }();
  return infos;
}

std::string model_names(std::string_view last_separator) {
  std::string out;
  const auto& entries = registry();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) out += i + 1 == entries.size() ? std::string(last_separator) : ", ";
    out += entries[i].info.name;
  }
  return out;
}

CommModel make_model(const std::string& name, const LinkParams& link) {
  for (const auto& e : registry()) {
    if (e.info.name == name) return CommModel(name, e.view(link));
  }
  throw InputError(fmt::format("unknown model \"{}\" ({})", name, model_names(" or ")));
}

}  // namespace commgauge::model
