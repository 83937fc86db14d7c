#include "report/overlap_report.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "model/closed_forms.hpp"
#include "report/plot.hpp"
#include "report/text_table.hpp"
#include "stats/median_ci.hpp"

namespace commgauge::report {

namespace {

// Where overlap and loggp agree: at S, or from an eager range with acknowledgement below it.
std::string agreement(const measure::OverlapResult& r) {
  for (const auto& range : r.ranges) {
    if (range.mechanism == model::TransferMechanism::TA)
      return fmt::format("they agree: eager with acknowledgement (Tm = TA) from {} B",
                         range.from_bytes);
  }
  return "they agree";
}

std::string scp_name(const std::optional<model::Progress>& p) {
  if (!p) return "";
  return *p == model::Progress::dependent ? "DCP" : "ICP";
}

nlohmann::json votes_json(const measure::OverlapVotes& v) {
  return {{"for", v.for_first}, {"trials", v.trials}, {"decided", v.decided}};
}

// "DCP 2/22", with "?" when the sign test left the majority undecided.
std::string verdict_cell(const std::string& name, const measure::OverlapVotes& v) {
  if (v.trials == 0) return name;
  return fmt::format("{}{} {}/{}", name, v.decided ? "" : "?", v.for_first, v.trials);
}

}  // namespace

nlohmann::json overlap_profile_section(const measure::OverlapResult& r) {
  nlohmann::json ranges = nlohmann::json::array();
  for (const auto& range : r.ranges) {
    nlohmann::json j = {{"from_bytes", range.from_bytes},
                        {"Tm", model::to_string(range.mechanism)},
                        {"Rso", range.rso},
                        {"Rro", range.rro},
                        {"comp_us", range.comp_us}};
    if (range.progress && range.resolved) j["Scp"] = scp_name(range.progress);
    if (!range.resolved) j["Tm"] = "unresolved";
    if (range.rendezvous) {
      j["icp_votes"] = votes_json(range.icp_votes);
      j["rat_votes"] = votes_json(range.rat_votes);
    }
    if (range.control_send_us >= 0) j["O_prime_s_us"] = range.control_send_us;
    if (range.control_recv_us >= 0) j["O_prime_r_us"] = range.control_recv_us;
    ranges.push_back(j);
  }
  nlohmann::json out = {{"S_bytes", r.switch_bytes}, {"ranges", ranges}};
  if (r.agrees_with_loggp) out["agrees_with_loggp"] = *r.agrees_with_loggp;
  if (!r.resolution.empty()) out["resolution"] = r.resolution;
  return out;
}

nlohmann::json overlap_json(const measure::OverlapResult& r, const measure::OverlapOptions& o,
                            const nlohmann::json& context) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : r.points) {
    nlohmann::json j = {{"size_bytes", p.bytes},
                        {"one_way_us", p.one_way_us},
                        {"comp_us", p.comp_us},
                        {"isend_us", p.isend_us},
                        {"irecv_us", p.irecv_us},
                        {"sender_wait_us", p.sender_wait_us},
                        {"receiver_wait_us", p.receiver_wait_us},
                        {"sender_wait_nocomp_us", p.sender_wait_nocomp_us},
                        {"receiver_wait_nocomp_us", p.receiver_wait_nocomp_us},
                        {"irecv_late_us", p.irecv_late_us},
                        {"receiver_wait_late_us", p.receiver_wait_late_us},
                        {"sender_wait_sender_late_us", p.sender_wait_sender_late_us},
                        {"receiver_wait_sender_late_us", p.receiver_wait_sender_late_us},
                        {"sender_wait_receiver_late_us", p.sender_wait_receiver_late_us},
                        {"sync_votes", votes_json(p.sync_votes)},
                        {"synchronizing", p.synchronizing},
                        {"Tm", model::to_string(p.mechanism)},
                        {"Rso", p.rso},
                        {"Rro", p.rro},
                        {"ratio_comp_us", p.rso_comp_us}};
    if (p.progress) j["Scp"] = scp_name(p.progress);
    if (p.synchronizing) {
      j["icp_votes"] = votes_json(p.icp_votes);
      j["rat_votes"] = votes_json(p.rat_votes);
      j["remeasured"] = p.remeasured;
    }
    points.push_back(j);
  }
  nlohmann::json out = overlap_profile_section(r);
  out["method"] = "overlap";
  out["points"] = points;
  nlohmann::json notes = nlohmann::json::array();
  for (std::size_t k = 0; k < r.ranges.size(); ++k) {
    for (const auto& n : r.ranges[k].notes)
      notes.push_back(fmt::format("range {}: {}", k, n));
    out["ranges"][k]["supported_by_loggpo"] = r.ranges[k].supported;
  }
  for (const auto& n : r.notes)
    notes.push_back(n);
  out["notes"] = notes;
  if (r.loggp_switch_bytes) out["loggp_S_bytes"] = *r.loggp_switch_bytes;
  out["messages"] = r.source_counters.messages;
  out["bytes"] = r.source_counters.bytes;
  out["seconds"] = r.seconds;
  out["complete"] = r.interrupted.empty();
  if (!r.interrupted.empty()) out["interrupted"] = r.interrupted;
  out["parameters"] = o;
  out["context"] = context;
  return out;
}

std::string overlap_table(const measure::OverlapResult& r, TableSink* sink) {
  TextTable t({"size_B", "one-way_us", "C_us", "Isend_us", "Osw_us", "Irecv_us", "Orw_us",
               "Osw(C=0)", "Orw(C=0)", "Irecv_late", "Orw(sender+C)", "Osw(recv+C)", "proto", "Scp",
               "Tm", "Rso", "Rro"});
  for (const auto& p : r.points) {
    t.add_row({std::to_string(p.bytes), number(p.one_way_us), number(p.comp_us, 3),
               number(p.isend_us, 3), number(p.sender_wait_us, 3), number(p.irecv_us, 3),
               number(p.receiver_wait_us, 3), number(p.sender_wait_nocomp_us, 3),
               number(p.receiver_wait_nocomp_us, 3), number(p.irecv_late_us, 3),
               number(p.receiver_wait_sender_late_us, 3), number(p.sender_wait_receiver_late_us, 3),
               verdict_cell(p.synchronizing ? "rndv" : "eager", p.sync_votes),
               p.synchronizing ? verdict_cell(scp_name(p.progress), p.icp_votes) : "",
               p.synchronizing ? verdict_cell(model::to_string(p.mechanism), p.rat_votes)
                               : model::to_string(p.mechanism),
               number(p.rso, 3), number(p.rro, 3)});
  }
  std::string out =
      "OVERLAP PER SIZE (Osw/Orw: time in the sender's/receiver's MPI_Wait after "
      "both computed C; Irecv_late: MPI_Irecv after the data arrived; Scp, Tm: the verdict with "
      "the trials that read ICP, RAT of all, proto with those that read rendezvous, ? where the "
      "sign test left it undecided)\n" +
      render(t, sink, "overlap_per_size");
  TextTable g({"range from (bytes)", "protocol", "Scp", "Tm", "O'_s_us", "O'_r_us", "Rso", "Rro",
               "loggpo"});
  for (const auto& range : r.ranges) {
    // range.rendezvous: the range's sends wait for a late receiver; with Tm = TA the data went
    // eagerly and only the acknowledgement waited.
    const bool ta = range.mechanism == model::TransferMechanism::TA;
    g.add_row({std::to_string(range.from_bytes), range.rendezvous && !ta ? "rendezvous" : "eager",
               range.rendezvous ? verdict_cell(scp_name(range.progress), range.icp_votes) : "",
               range.rendezvous && !ta
                   ? verdict_cell(model::to_string(range.mechanism), range.rat_votes)
                   : model::to_string(range.mechanism),
               range.control_send_us >= 0 ? number(range.control_send_us) : "",
               range.control_recv_us >= 0 ? number(range.control_recv_us) : "",
               number(range.rso, 3), number(range.rro, 3), range.supported ? "ok" : "rejected"});
  }
  out += "\nLogGPO PARAMETERS PER RANGE (seed 001)\n" + render(g, sink, "overlap_ranges");
  out += fmt::format("sends wait for a late receiver (overlap) from: {}",
                     r.switch_bytes ? std::to_string(r.switch_bytes) + " B" : "none");
  if (r.loggp_switch_bytes) {
    out +=
        fmt::format("; loggp's rendezvous switch S: {}; {}",
                    *r.loggp_switch_bytes ? std::to_string(*r.loggp_switch_bytes) + " B" : "none",
                    r.resolution.empty() ? agreement(r) : r.resolution);
  }
  out += "\n";
  for (std::size_t k = 0; k < r.ranges.size(); ++k) {
    for (const auto& n : r.ranges[k].notes)
      out += fmt::format("range {}: {}\n", k, n);
  }
  out += fmt::format("{} messages, {:.3g} MB sent by the source, {:.1f} s\n",
                     r.source_counters.messages, static_cast<double>(r.source_counters.bytes) / 1e6,
                     r.seconds);
  return out;
}

void plot_overlap(const std::filesystem::path& output, const measure::OverlapResult& r,
                  const std::string& title) {
  // Each median with the 95 % order-statistic interval of its trials; 1e-4 us keeps a zero on the
  // logarithmic axis.
  const auto bar = [](const std::vector<double>& trials, double median) {
    if (trials.empty()) return fmt::format("{0:.6f} {0:.6f} {0:.6f}", median + 1e-4);
    const auto ci = stats::median_interval(trials);
    return fmt::format("{:.6f} {:.6f} {:.6f}", median + 1e-4, std::max(ci.lower, 0.0) + 1e-4,
                       ci.upper + 1e-4);
  };
  std::string data = "# size oneway, then value lo hi of: isend swait rwait swait0 rwait0\n";
  for (const auto& p : r.points) {
    const auto& t = p.trials;
    data += fmt::format("{} {:.6f} {} {} {} {} {}\n", p.bytes, p.one_way_us,
                        bar(t.isend_us, p.isend_us), bar(t.sender_wait_us, p.sender_wait_us),
                        bar(t.receiver_wait_us, p.receiver_wait_us),
                        bar(t.sender_wait_nocomp_us, p.sender_wait_nocomp_us),
                        bar(t.receiver_wait_nocomp_us, p.receiver_wait_nocomp_us));
  }
  std::string script = fmt::format(
      "set title {}\nset logscale xy\nset xlabel 'message size (bytes)'\nset ylabel 'time (us), "
      "median and 95 % interval of the trials'\nset key top left\nset grid\n",
      gnuplot_string(title));
  if (r.switch_bytes) {
    script += fmt::format("set arrow from {0},graph 0 to {0},graph 1 nohead dt 2 lc rgb 'gray40'\n",
                          r.switch_bytes);
  }
  script +=
      "plot 'overlap.dat' u 1:2 w lp pt 7 title 'one-way (blocking)', "
      "'' u 1:3:4:5 w yerrorlines pt 5 title 'MPI_Isend', "
      "'' u 1:6:7:8 w yerrorlines pt 9 title 'sender Wait after computing C', "
      "'' u 1:9:10:11 w yerrorlines pt 11 title 'receiver Wait after computing C', "
      "'' u 1:12:13:14 w yerrorlines dt 2 pt 0 title 'sender Wait, no computation', "
      "'' u 1:15:16:17 w yerrorlines dt 3 pt 0 title 'receiver Wait, no computation'";
  run_gnuplot(output, script, {{"overlap.dat", data}});
}

}  // namespace commgauge::report
