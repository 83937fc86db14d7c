#include "model/link_params.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge::model {

std::string to_string(Progress p) {
  return p == Progress::independent ? "independent" : "dependent";
}

Progress progress_from_string(const std::string& text) {
  if (text == "independent") return Progress::independent;
  if (text == "dependent") return Progress::dependent;
  throw InputError(
      fmt::format("progress must be \"independent\" or \"dependent\", not \"{}\"", text));
}

std::uint64_t LinkRange::billed_bytes(std::uint64_t k, std::uint64_t page_offset_bytes) const {
  if (page_bytes == 0 || k == 0) return k;
  const std::uint64_t P = page_bytes, A = kMallocAlignmentBytes;
  const std::uint64_t q = k / P, r = k % P;
  // pages * P + more - less, saturated (a bill past 2^64 bytes is past every clock anyway).
  auto bill = [P](std::uint64_t pages, std::uint64_t more, std::uint64_t less) {
    if (pages > (UINT64_MAX - more) / P) return UINT64_MAX;
    return pages * P + more - less;
  };
  if (page_offset_bytes == kUnknownPageOffset && P > A) {
    // The mean over the P / A starts o = 0, A, ..., P - A: with r = 0, q pages from o = 0 and
    // q + 1 from the others, (q + 1) P - A; with r > 0, q + 1 pages, and q + 2 from the
    // floor((r - 1) / A) starts past P - r: (q + 1) P + A floor((r - 1) / A).
    return r == 0 ? bill(q + 1, 0, A) : bill(q + 1, A * ((r - 1) / A), 0);
  }
  // ceil((o + k) / P) pages from o bytes past a page's start (unknown with P <= A: o = 0).
  const std::uint64_t o = page_offset_bytes == kUnknownPageOffset ? 0 : page_offset_bytes % P;
  return bill(q + (o + r + P - 1) / P, 0, 0);
}

std::size_t LinkParams::range_index(std::uint64_t bytes) const {
  // ranges are sorted; find the last range whose from_bytes <= bytes.
  auto it = std::upper_bound(ranges.begin(), ranges.end(), bytes,
                             [](std::uint64_t b, const LinkRange& r) { return b < r.from_bytes; });
  if (it == ranges.begin()) return 0;
  return static_cast<std::size_t>(it - ranges.begin()) - 1;
}

const LinkRange& LinkParams::range_for(std::uint64_t bytes) const {
  return ranges.at(range_index(bytes));
}

std::uint64_t LinkParams::to_bytes(std::size_t i) const {
  if (i + 1 < ranges.size()) return ranges[i + 1].from_bytes - 1;
  return std::numeric_limits<std::uint64_t>::max();
}

std::uint64_t LinkParams::rendezvous_threshold_bytes() const {
  for (const auto& r : ranges) {
    if (r.rendezvous) return std::max<std::uint64_t>(r.from_bytes, 1);
  }
  return 0;
}

double LinkParams::self_message_cost_us(std::uint64_t bytes) const {
  const auto& p = self_message;
  const auto at = static_cast<double>(bytes);
  if (p.size() == 1 || bytes <= p.front().bytes) return p.front().us;
  std::size_t i = 1;  // the segment [p[i-1], p[i]] holding bytes, or the last one beyond
  while (i + 1 < p.size() && bytes > p[i].bytes)
    ++i;
  const double from = static_cast<double>(p[i - 1].bytes), to = static_cast<double>(p[i].bytes);
  return std::max(0.0, p[i - 1].us + (p[i].us - p[i - 1].us) * (at - from) / (to - from));
}

void validate(const LinkParams& link, const std::string& where) {
  if (link.ranges.empty()) throw InputError(where, "/ranges: at least one range is needed");
  if (link.self_message.size() > 64) {
    throw InputError(
        where, fmt::format("/self_message: at most 64 sizes, got {}", link.self_message.size()));
  }
  for (std::size_t i = 0; i < link.self_message.size(); ++i) {
    const auto& p = link.self_message[i];
    if (i > 0 && p.bytes <= link.self_message[i - 1].bytes)
      throw InputError(where, fmt::format("/self_message/{}: sizes must increase ({} B follows "
                                          "{} B)",
                                          i, p.bytes, link.self_message[i - 1].bytes));
    if (!(p.us >= 0 && p.us <= 1e9))
      throw InputError(
          where, fmt::format("/self_message/{}: must be within [0, 1e9] us, got {}", i, p.us));
  }
  // The replay holds one bit per rank for each (sim::Network): at most 32 functions.
  if (link.first_call_us.size() > 32) {
    throw InputError(where, fmt::format("/first_call_us: at most 32 functions, got {}",
                                        link.first_call_us.size()));
  }
  for (const auto& [function, extra_us] : link.first_call_us) {
    if (function.rfind("MPI_", 0) != 0)
      throw InputError(where, fmt::format("/first_call_us/{}: expected an MPI function's name "
                                          "(MPI_...)",
                                          function));
    if (!(extra_us >= 0 && extra_us <= 1e9))
      throw InputError(where, fmt::format("/first_call_us/{}: must be within [0, 1e9], got {}",
                                          function, extra_us));
  }
  if (link.ranges.front().from_bytes > 1) {
    throw InputError(where, fmt::format("/ranges/0/from_bytes: the first range must start at 0 or "
                                        "1 byte, not {}",
                                        link.ranges.front().from_bytes));
  }
  for (std::size_t i = 0; i < link.ranges.size(); ++i) {
    const LinkRange& r = link.ranges[i];
    const std::string at = fmt::format("/ranges/{}/", i);
    if (i > 0 && r.from_bytes <= link.ranges[i - 1].from_bytes) {
      throw InputError(where, fmt::format("{}from_bytes: ranges must be in increasing order of "
                                          "from_bytes ({} follows {})",
                                          at, r.from_bytes, link.ranges[i - 1].from_bytes));
    }
    if (!LinkRange::valid_page_bytes(r.page_bytes)) {
      throw InputError(where, fmt::format("{}page_bytes: must be 0 (per byte) or a power of two "
                                          "up to 1 GiB, got {}",
                                          at, r.page_bytes));
    }
    const std::pair<const char*, double> non_negative[] = {
        {"o_s_us", r.send_overhead_us},
        {"o_r_us", r.recv_overhead_us},
        {"O_s_us_per_byte", r.send_overhead_per_byte_us},
        {"O_r_us_per_byte", r.recv_overhead_per_byte_us},
        {"g_us", r.gap_us},
        {"G_us_per_byte", r.gap_per_byte_us},
        {"o_u_us", r.unexpected_recv_us},
        {"o_x_us", r.crossing_recv_us},
        {"O_x_us_per_byte", r.crossing_recv_per_byte_us},
        {"G_st_us_per_byte", r.stream_gap_per_byte_us}};
    // Bounded so that every value compiles into the integer clock (model/cost.cpp) exactly.
    constexpr double kLargest = 1e9;  // us, or us per byte: 1000 s
    for (const auto& [name, value] : non_negative) {
      if (!(value >= 0)) {
        throw InputError(where, fmt::format("{}{}: must be >= 0, got {}", at, name, value));
      }
      if (value > kLargest) {
        throw InputError(
            where, fmt::format("{}{}: must be at most {}, got {}", at, name, kLargest, value));
      }
    }
    for (const auto& [name, value] :
         {std::pair<const char*, double>{"poll_us", link.poll_us},
          {"comm_create_us", link.comm_create_us},
          {"comm_free_us", link.comm_free_us},
          {"collective_call_us", link.collective_call_us},
          {"reduce_us_per_byte", link.reduce_us_per_byte},
          {"reduce_call_us", link.reduce_call_us},
          {"copy_us_per_byte", link.copy_us_per_byte},
          {"reduce_into_sent_us_per_byte", link.reduce_into_sent_us_per_byte},
          {"copy_into_sent_us_per_byte", link.copy_into_sent_us_per_byte},
          {"written_send_us_per_byte", link.written_send_us_per_byte},
          {"recv_into_sent_us_per_byte", link.recv_into_sent_us_per_byte},
          {"fresh_memory_us_per_byte", link.fresh_memory_us_per_byte},
          {"copy_after_rendezvous_us_per_byte", link.copy_after_rendezvous_us_per_byte},
          {"send_overlap_us", link.send_overlap_us}}) {
      if (!(value >= 0 && value <= kLargest))
        throw InputError(where,
                         fmt::format("/{}: must be within [0, {}], got {}", name, kLargest, value));
    }
    if (!(link.latency_us >= -kLargest && link.latency_us <= kLargest)) {
      throw InputError(
          where, fmt::format("/L_us: must be within +-{}, got {}", kLargest, link.latency_us));
    }
    for (const auto& [name, value] :
         {std::pair<const char*, double>{"o_ctrl_s_us", r.control_send_us},
          {"o_ctrl_r_us", r.control_recv_us},
          {"loggp_o_s_us", r.loggp.o_s_us},
          {"loggp_o_r_us", r.loggp.o_r_us},
          {"loggp_g_us", r.loggp.g_us},
          {"loggp_G_us_per_byte", r.loggp.G_us_per_byte}}) {
      if ((value < 0 && value != -1) || value > kLargest) {
        throw InputError(
            where, fmt::format("{}{}: must be within [0, {}], got {}", at, name, kLargest, value));
      }
    }
    // A message cannot reach its receiver before its send began.
    if (link.send_overlap_us > r.least_send_overhead_us()) {
      throw InputError(where, fmt::format("/send_overlap_us: {} us exceeds the send overhead {} "
                                          "us of {}: a message would arrive before its send began",
                                          link.send_overlap_us, r.least_send_overhead_us(),
                                          at.substr(0, at.size() - 1)));
    }
    const double one_way = r.send_overhead_us + link.effective_latency_us() + r.recv_overhead_us;
    if (!(one_way > 0)) {
      throw InputError(where,
                       fmt::format("{}: the one-way time o_s + L - omega + o_r must be "
                                   "positive, got {} + {} - {} + {} = {} us",
                                   at.substr(0, at.size() - 1), r.send_overhead_us, link.latency_us,
                                   link.send_overlap_us, r.recv_overhead_us, one_way));
    }
  }
}

}  // namespace commgauge::model
