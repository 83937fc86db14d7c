#include "sim/network.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common/error.hpp"
#include "profile/link_params_json.hpp"
#include "trace/functions.hpp"

namespace commgauge::sim {

std::vector<std::string> simulation_model_names() {
  std::vector<std::string> names{"none"};
  for (const auto& m : model::model_infos())
    names.push_back(m.name);
  return names;
}

Network::Network(const std::string& model_name,
                 const std::map<std::string, model::LinkParams>& links, Cluster cluster,
                 std::vector<std::uint32_t> node_of_rank)
    : model_name_(model_name),
      cluster_(std::move(cluster)),
      node_of_rank_(std::move(node_of_rank)) {
  if (model_name_ == "none") return;
  const std::string* names[2] = {&cluster_.same_node_class, &cluster_.different_nodes_class};
  bool any = false;
  for (int i = 0; i < 2; ++i) {
    const auto it = links.find(*names[i]);
    if (it == links.end()) {
      missing_[i] = *names[i];
      continue;
    }
    models_[i].emplace(model::make_model(model_name_, it->second));
    any = true;
  }
  if (!any)
    throw InputError(
        fmt::format("the links have neither class \"{}\" nor \"{}\"", *names[0], *names[1]));
  for (const auto& m : models_) {
    if (!m) continue;
    for (const auto& r : m->link().ranges)
      charges_crossing_ = charges_crossing_ || r.crossing_recv_us > 0;
  }
  for (const auto& m : models_) {
    if (m && m->link().poll_us > 0) {
      failed_poll_ = model::to_picoseconds(m->link().poll_us);
      break;
    }
  }
  for (const auto& m : models_) {
    if (m && (m->link().reduce_us_per_byte > 0 || m->link().copy_us_per_byte > 0 ||
              m->link().reduce_call_us > 0)) {
      reduce_ps_per_byte_ = m->link().reduce_us_per_byte * 1e6;
      reduce_call_ps_ = m->link().reduce_call_us * 1e6;
      copy_ps_per_byte_ = m->link().copy_us_per_byte * 1e6;
      reduce_into_sent_ps_per_byte_ = m->link().reduce_into_sent_us_per_byte * 1e6;
      copy_into_sent_ps_per_byte_ = m->link().copy_into_sent_us_per_byte * 1e6;
      copy_after_rendezvous_ps_per_byte_ = m->link().copy_after_rendezvous_us_per_byte * 1e6;
      break;
    }
  }
  for (const auto& m : models_) {
    if (m && m->link().collective_call_us > 0) {
      collective_call_ = model::to_picoseconds(m->link().collective_call_us);
      break;
    }
  }
  for (const auto& m : models_) {
    if (!m || m->link().first_call_us.empty()) continue;
    for (const auto& [function, extra_us] : m->link().first_call_us) {
      const auto id = trace::function_id(function);
      if (!id)
        throw InputError(
            fmt::format("first_call_us: {} is no MPI function the trace format "
                        "knows",
                        function));
      if (extra_us <= 0) continue;
      if (first_call_bit_.size() <= *id) first_call_bit_.resize(*id + 1, -1);
      first_call_bit_[*id] = static_cast<std::int8_t>(first_call_ps_.size());
      first_call_ps_.push_back(model::to_picoseconds(extra_us, "a first call's cost"));
    }
    break;  // one class's, as for the poll cost: both describe the same processes
  }
  for (const auto& m : models_) {
    if (m && (m->link().comm_create_us > 0 || m->link().comm_free_us > 0)) {
      comm_creation_ = model::to_picoseconds(m->link().comm_create_us);
      comm_release_ = model::to_picoseconds(m->link().comm_free_us);
      break;
    }
  }
}

model::Picoseconds Network::local_work(std::uint64_t reduce_bytes, std::uint64_t copy_bytes,
                                       bool into_sent_rendezvous) const {
  const double reduce_rate = into_sent_rendezvous && reduce_into_sent_ps_per_byte_ > 0
                                 ? reduce_into_sent_ps_per_byte_
                                 : reduce_ps_per_byte_;
  const double ps = static_cast<double>(reduce_bytes) * reduce_rate +
                    (reduce_bytes > 0 ? reduce_call_ps_ : 0.0) +
                    static_cast<double>(copy_bytes) * copy_ps_per_byte_;
  if (!(ps <= static_cast<double>(model::kMaxMessageCostPs.count())))
    throw TimeRangeError(
        fmt::format("a collective step's local work ({} B combined, {} B copied) "
                    "exceeds the simulated time range",
                    reduce_bytes, copy_bytes));
  return model::Picoseconds{std::llround(ps)};
}

model::Picoseconds Network::copy_into_sent(std::uint64_t bytes) const {
  if (copy_into_sent_ps_per_byte_ <= 0) return local_work(0, bytes);
  const double ps = static_cast<double>(bytes) * copy_into_sent_ps_per_byte_;
  if (!(ps <= static_cast<double>(model::kMaxMessageCostPs.count())))
    throw TimeRangeError(fmt::format(
        "a collective's copy of {} B into a buffer just sent exceeds the simulated time range",
        bytes));
  return model::Picoseconds{std::llround(ps)};
}

model::Picoseconds Network::copy_after_rendezvous(std::uint64_t bytes) const {
  if (bytes == 0) return model::Picoseconds{0};
  if (!charges_copy_after_rendezvous()) return local_work(0, bytes);
  // Never below the warm copy: a difference of two noisy loops can fall under it.
  const double ps =
      static_cast<double>(bytes) * std::max(copy_after_rendezvous_ps_per_byte_, copy_ps_per_byte_);
  if (!(ps <= static_cast<double>(model::kMaxMessageCostPs.count())))
    throw TimeRangeError(fmt::format(
        "a collective's copy of {} B after a rendezvous exchange exceeds the simulated time range",
        bytes));
  return model::Picoseconds{std::llround(ps)};
}

model::Picoseconds Network::per_byte_extra(std::int32_t source, std::int32_t destination,
                                           std::uint64_t bytes, double model::LinkParams::*rate,
                                           const char* what) const {
  if (!models_[0] && !models_[1]) return {};
  const double ps =
      static_cast<double>(bytes) * (model_for(source, destination).link().*rate) * 1e6;
  if (!(ps <= static_cast<double>(model::kMaxMessageCostPs.count())))
    throw TimeRangeError(
        fmt::format("a transfer of {} B {} exceeds the simulated time range", bytes, what));
  return model::Picoseconds{std::llround(ps)};
}

model::Picoseconds Network::written_data(std::int32_t source, std::int32_t destination,
                                         std::uint64_t bytes) const {
  return per_byte_extra(source, destination, bytes, &model::LinkParams::written_send_us_per_byte,
                        "of written data");
}

model::Picoseconds Network::into_sent(std::int32_t source, std::int32_t destination,
                                      std::uint64_t bytes) const {
  return per_byte_extra(source, destination, bytes, &model::LinkParams::recv_into_sent_us_per_byte,
                        "into the block its receiver sent");
}

model::Picoseconds Network::fresh_memory(std::int32_t source, std::int32_t destination,
                                         std::uint64_t bytes) const {
  if (bytes == 0) return {};
  return per_byte_extra(source, destination, bytes, &model::LinkParams::fresh_memory_us_per_byte,
                        "into memory never touched");
}

void Network::set_measured_max_bytes(const std::map<std::string, std::uint64_t>& by_class) {
  const std::string* names[2] = {&cluster_.same_node_class, &cluster_.different_nodes_class};
  for (int i = 0; i < 2; ++i) {
    const auto it = by_class.find(*names[i]);
    measured_max_bytes_[i] = it == by_class.end() ? 0 : it->second;
  }
}

const std::string& Network::link_class(std::int32_t source, std::int32_t destination) const {
  return same_node(source, destination) ? cluster_.same_node_class : cluster_.different_nodes_class;
}

const model::CommModel& Network::model_for(std::int32_t source, std::int32_t destination) const {
  const int i = same_node(source, destination) ? 0 : 1;
  if (!models_[i]) {
    throw InputError(
        fmt::format("the links have no class \"{}\", but ranks {} and {} are placed on {} "
                    "(nodes {} and {})",
                    missing_[i], source, destination, i == 0 ? "one node" : "different nodes",
                    node(source), node(destination)));
  }
  return *models_[i];
}

}  // namespace commgauge::sim
