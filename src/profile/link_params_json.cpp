#include "profile/link_params_json.hpp"

#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "profile/embedded_schemas.hpp"
#include "profile/json_file.hpp"

namespace commgauge::profile {

const std::string& link_params_schema_text() {
  static const std::string text = embedded::kLinkParamsSchema;
  return text;
}

const JsonSchema& link_params_schema() {
  static const JsonSchema schema(nlohmann::json::parse(link_params_schema_text()));
  return schema;
}

model::LinkParams link_params_from_json(const nlohmann::json& document, const std::string& where) {
  link_params_schema().validate(document, where);
  model::LinkParams link;
  link.latency_us = document["L_us"].get<double>();
  link.send_overlap_us = document.value("send_overlap_us", 0.0);
  link.poll_us = document.value("poll_us", 0.0);
  link.comm_create_us = document.value("comm_create_us", 0.0);
  link.comm_free_us = document.value("comm_free_us", 0.0);
  link.collective_call_us = document.value("collective_call_us", 0.0);
  link.reduce_us_per_byte = document.value("reduce_us_per_byte", 0.0);
  link.reduce_call_us = document.value("reduce_call_us", 0.0);
  link.copy_us_per_byte = document.value("copy_us_per_byte", 0.0);
  link.reduce_into_sent_us_per_byte = document.value("reduce_into_sent_us_per_byte", 0.0);
  link.copy_into_sent_us_per_byte = document.value("copy_into_sent_us_per_byte", 0.0);
  link.written_send_us_per_byte = document.value("written_send_us_per_byte", 0.0);
  link.recv_into_sent_us_per_byte = document.value("recv_into_sent_us_per_byte", 0.0);
  link.fresh_memory_us_per_byte = document.value("fresh_memory_us_per_byte", 0.0);
  link.copy_after_rendezvous_us_per_byte = document.value("copy_after_rendezvous_us_per_byte", 0.0);
  if (const auto it = document.find("first_call_us"); it != document.end()) {
    for (const auto& [function, extra] : it->items())
      link.first_call_us[function] = extra.get<double>();
  }
  if (const auto it = document.find("self_message"); it != document.end()) {
    for (const auto& point : *it)
      link.self_message.push_back({point["bytes"].get<std::uint64_t>(), point["us"].get<double>()});
  }
  const auto& ranges = document["ranges"];
  for (const auto& r : ranges) {
    model::LinkRange range;
    range.from_bytes = r["from_bytes"].get<std::uint64_t>();
    range.send_overhead_us = r["o_s_us"].get<double>();
    range.recv_overhead_us = r["o_r_us"].get<double>();
    range.send_overhead_per_byte_us = r.value("O_s_us_per_byte", 0.0);
    range.recv_overhead_per_byte_us = r.value("O_r_us_per_byte", 0.0);
    range.gap_us = r["g_us"].get<double>();
    range.gap_per_byte_us = r["G_us_per_byte"].get<double>();
    range.unexpected_recv_us = r.value("o_u_us", 0.0);
    range.crossing_recv_us = r.value("o_x_us", 0.0);
    range.crossing_recv_per_byte_us = r.value("O_x_us_per_byte", 0.0);
    range.stream_gap_per_byte_us = r.value("G_st_us_per_byte", 0.0);
    range.page_bytes = r.value("page_bytes", std::uint64_t{0});
    range.control_send_us = r.value("o_ctrl_s_us", -1.0);
    range.control_recv_us = r.value("o_ctrl_r_us", -1.0);
    // The LogGP view; g_eq7_us and G_eq7_us_per_byte are its older names (g and G only).
    range.loggp.o_s_us = r.value("loggp_o_s_us", -1.0);
    range.loggp.o_r_us = r.value("loggp_o_r_us", -1.0);
    range.loggp.g_us = r.value("loggp_g_us", r.value("g_eq7_us", -1.0));
    range.loggp.G_us_per_byte = r.value("loggp_G_us_per_byte", r.value("G_eq7_us_per_byte", -1.0));
    range.rendezvous = r.value("rendezvous", false);
    range.transfer = r.value("Tm", std::string());
    range.progress = model::progress_from_string(r.value("progress", std::string("independent")));
    link.ranges.push_back(range);
  }
  model::validate(link, where);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (!ranges[i].contains("to_bytes")) continue;
    const auto to = ranges[i]["to_bytes"].get<std::uint64_t>();
    const bool last = i + 1 == ranges.size();
    if (!last && to != link.to_bytes(i)) {
      throw InputError(where, fmt::format("/ranges/{}/to_bytes: must be the next range's "
                                          "from_bytes - 1 = {}, got {}",
                                          i, link.to_bytes(i), to));
    }
    if (to < link.ranges[i].from_bytes) {
      throw InputError(where, fmt::format("/ranges/{}/to_bytes: {} is below from_bytes {}", i, to,
                                          link.ranges[i].from_bytes));
    }
  }
  return link;
}

model::LinkParams read_link_params(const std::filesystem::path& path) {
  return link_params_from_json(read_json_file(path), path.string());
}

nlohmann::json link_params_to_json(const model::LinkParams& link) {
  nlohmann::json doc = {{"format", "commgauge-link-params"},
                        {"version", 1},
                        {"L_us", link.latency_us},
                        {"L_negative", link.latency_negative()}};
  if (link.send_overlap_us > 0) doc["send_overlap_us"] = link.send_overlap_us;
  if (link.poll_us > 0) doc["poll_us"] = link.poll_us;
  if (link.comm_create_us > 0) doc["comm_create_us"] = link.comm_create_us;
  if (link.comm_free_us > 0) doc["comm_free_us"] = link.comm_free_us;
  if (link.collective_call_us > 0) doc["collective_call_us"] = link.collective_call_us;
  if (link.reduce_us_per_byte > 0) doc["reduce_us_per_byte"] = link.reduce_us_per_byte;
  if (link.reduce_call_us > 0) doc["reduce_call_us"] = link.reduce_call_us;
  if (link.copy_us_per_byte > 0) doc["copy_us_per_byte"] = link.copy_us_per_byte;
  if (link.reduce_into_sent_us_per_byte > 0)
    doc["reduce_into_sent_us_per_byte"] = link.reduce_into_sent_us_per_byte;
  if (link.copy_into_sent_us_per_byte > 0)
    doc["copy_into_sent_us_per_byte"] = link.copy_into_sent_us_per_byte;
  if (link.written_send_us_per_byte > 0)
    doc["written_send_us_per_byte"] = link.written_send_us_per_byte;
  if (link.recv_into_sent_us_per_byte > 0)
    doc["recv_into_sent_us_per_byte"] = link.recv_into_sent_us_per_byte;
  if (link.fresh_memory_us_per_byte > 0)
    doc["fresh_memory_us_per_byte"] = link.fresh_memory_us_per_byte;
  if (link.copy_after_rendezvous_us_per_byte > 0)
    doc["copy_after_rendezvous_us_per_byte"] = link.copy_after_rendezvous_us_per_byte;
  if (!link.first_call_us.empty()) doc["first_call_us"] = link.first_call_us;
  if (!link.self_message.empty()) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : link.self_message)
      points.push_back({{"bytes", p.bytes}, {"us", p.us}});
    doc["self_message"] = points;
  }
  nlohmann::json ranges = nlohmann::json::array();
  for (std::size_t i = 0; i < link.ranges.size(); ++i) {
    const auto& r = link.ranges[i];
    nlohmann::json j = {{"from_bytes", r.from_bytes},
                        {"o_s_us", r.send_overhead_us},
                        {"o_r_us", r.recv_overhead_us},
                        {"O_s_us_per_byte", r.send_overhead_per_byte_us},
                        {"O_r_us_per_byte", r.recv_overhead_per_byte_us},
                        {"g_us", r.gap_us},
                        {"G_us_per_byte", r.gap_per_byte_us},
                        {"rendezvous", r.rendezvous},
                        {"progress", model::to_string(r.progress)}};
    if (r.unexpected_recv_us > 0) j["o_u_us"] = r.unexpected_recv_us;
    if (r.crossing_recv_us > 0) j["o_x_us"] = r.crossing_recv_us;
    if (r.crossing_recv_per_byte_us > 0) j["O_x_us_per_byte"] = r.crossing_recv_per_byte_us;
    if (r.stream_gap_per_byte_us > 0) j["G_st_us_per_byte"] = r.stream_gap_per_byte_us;
    if (r.page_bytes > 0) j["page_bytes"] = r.page_bytes;
    if (!r.transfer.empty()) j["Tm"] = r.transfer;
    if (r.loggp.o_s_us >= 0) j["loggp_o_s_us"] = r.loggp.o_s_us;
    if (r.loggp.o_r_us >= 0) j["loggp_o_r_us"] = r.loggp.o_r_us;
    if (r.loggp.g_us >= 0) j["loggp_g_us"] = r.loggp.g_us;
    if (r.loggp.G_us_per_byte >= 0) j["loggp_G_us_per_byte"] = r.loggp.G_us_per_byte;
    if (r.control_send_us >= 0) j["o_ctrl_s_us"] = r.control_send_us;
    if (r.control_recv_us >= 0) j["o_ctrl_r_us"] = r.control_recv_us;
    if (i + 1 < link.ranges.size()) j["to_bytes"] = link.to_bytes(i);
    ranges.push_back(j);
  }
  doc["ranges"] = ranges;
  return doc;
}

}  // namespace commgauge::profile
