// Every protocol and progress mode read right (issue 14, item 3): loggp over a grid of virtual
// networks - the second range eager or rendezvous, independent or dependent progress, g below or
// above o, the switch at hundreds of bytes, 4 KiB, tens of KiB or about 1 MiB, one to three
// ranges. Each case must find its switches at the right size (to the byte) and protocol, and
// recover every calibrated parameter within 2 % or report it not identifiable with an interval
// that holds the truth. A table row per case is printed.

#include <cmath>
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "measure/loggp.hpp"
#include "net/virtual_network.hpp"

namespace commgauge::measure {
namespace {

struct Case {
  std::string name;
  model::LinkParams link;
  std::uint64_t min_size = 1, max_size = 1;
};

model::LinkRange eager_range(bool gap_above_overhead) {
  model::LinkRange r;
  r.from_bytes = 1;
  r.send_overhead_us = 1.0;
  r.recv_overhead_us = 1.4;
  r.send_overhead_per_byte_us = 0.0002;
  r.recv_overhead_per_byte_us = 0.0003;
  r.gap_us = gap_above_overhead ? 4.0 : 0.5;
  r.gap_per_byte_us = 0.0008;
  return r;
}

model::LinkRange second_range(std::uint64_t from, bool rendezvous, model::Progress progress,
                              bool gap_above_overhead) {
  model::LinkRange r;
  r.from_bytes = from;
  r.send_overhead_us = 2.5;
  r.recv_overhead_us = 2.0;
  r.send_overhead_per_byte_us = 0.0001;
  r.recv_overhead_per_byte_us = 0.0001;
  r.gap_us = gap_above_overhead ? 9.0 : 1.0;
  // The same wire under a rendezvous protocol; an eager protocol change with its own G.
  r.gap_per_byte_us = rendezvous ? 0.0008 : 0.0005;
  r.rendezvous = rendezvous;
  r.progress = progress;
  return r;
}

std::vector<Case> grid() {
  std::vector<Case> out;
  for (bool gap_above : {false, true}) {
    Case one;
    one.name = fmt::format("1 range, g {} o", gap_above ? ">" : "<");
    one.link.latency_us = 3.0;
    one.link.ranges = {eager_range(gap_above)};
    one.max_size = 256u << 10;
    out.push_back(one);
  }
  for (std::uint64_t at : {300ULL, 4096ULL, 24001ULL, 1048577ULL}) {
    for (bool rendezvous : {false, true}) {
      for (auto progress : {model::Progress::independent, model::Progress::dependent}) {
        if (!rendezvous && progress == model::Progress::dependent) continue;  // no hand-shake
        for (bool gap_above : {false, true}) {
          Case c;
          c.name =
              fmt::format("2 ranges, {} at {} B, {}, g {} o", rendezvous ? "rendezvous" : "eager",
                          at, model::to_string(progress), gap_above ? ">" : "<");
          c.link.latency_us = 3.0;
          c.link.ranges = {eager_range(gap_above),
                           second_range(at, rendezvous, progress, gap_above)};
          c.min_size = std::max<std::uint64_t>(1, at / 64);
          c.max_size = at * 16;
          out.push_back(c);
        }
      }
    }
  }
  for (auto progress : {model::Progress::independent, model::Progress::dependent}) {
    for (bool gap_above : {false, true}) {
      Case c;
      c.name = fmt::format("3 ranges, eager at 1500 B, rendezvous at 24001 B, {}, g {} o",
                           model::to_string(progress), gap_above ? ">" : "<");
      c.link.latency_us = 3.0;
      auto middle = second_range(1500, false, progress, gap_above);
      auto last = second_range(24001, true, progress, gap_above);
      last.send_overhead_us = 4.0;
      last.gap_per_byte_us = middle.gap_per_byte_us;
      c.link.ranges = {eager_range(gap_above), middle, last};
      c.min_size = 1;
      c.max_size = 24001 * 16;
      out.push_back(c);
    }
  }
  return out;
}

class LoggpGrid : public ::testing::TestWithParam<Case> {};

TEST_P(LoggpGrid, RecoversRangesProtocolAndParametersOrBoundsThem) {
  const Case& c = GetParam();
  LoggpOptions o;
  o.min_size = c.min_size;
  o.max_size = c.max_size;
  o.seed = 11;
  // Exact data: two rounds show that every round agrees; the budget is no object here.
  o.min_rounds = o.max_rounds = 2;
  o.bootstrap = 20;
  o.max_bytes = 1'000'000'000'000ULL;
  o.max_messages = 100'000'000ULL;
  net::VirtualNetwork net(c.link);
  LoggpResult r;
  net.run([&](net::Transport& t) {
    if (auto x = measure_loggp(t, o, nullptr)) r = std::move(*x);
  });
  const auto& truth = c.link.ranges;
  std::string found;
  for (const auto& sw : r.switches) {
    found += fmt::format("{}{}{} ", sw.first_bytes, sw.rendezvous ? "R" : "e", sw.exact ? "" : "~");
  }
  double worst = 0;
  std::string open;
  ASSERT_EQ(r.switches.size() + 1, truth.size()) << c.name << ": switches " << found;
  for (std::size_t k = 1; k < truth.size(); ++k) {
    const auto& sw = r.switches[k - 1];
    EXPECT_EQ(sw.first_bytes, truth[k].from_bytes) << c.name << ": " << sw.verdict;
    EXPECT_TRUE(sw.exact) << c.name;
    EXPECT_EQ(sw.rendezvous, truth[k].rendezvous) << c.name;
  }
  ASSERT_EQ(r.link.ranges.size(), truth.size());
  auto check = [&](std::size_t range, const char* name, double got, double want) {
    for (const auto& u : r.calibrated.not_identifiable) {
      if (u.range == range && u.parameter == name) {
        open += fmt::format("{}{}[{:.3g},{:.3g}] ", name, range, u.lower, u.upper);
        EXPECT_LE(u.lower, want * (1 + 1e-3) + 1e-9) << c.name << " " << name << range;
        EXPECT_GE(u.upper, want * (1 - 1e-3) - 1e-9) << c.name << " " << name << range;
        return;
      }
    }
    const double err = std::abs(got - want) / std::max(std::abs(want), 1e-12);
    if (want == 0) {
      EXPECT_NEAR(got, 0, 1e-9) << c.name << " " << name << range;
    } else {
      worst = std::max(worst, err);
      EXPECT_LE(err, 0.02) << c.name << " " << name << range << ": " << got << " vs " << want;
    }
  };
  check(SIZE_MAX, "L", r.link.latency_us, c.link.latency_us);
  for (std::size_t k = 0; k < truth.size(); ++k) {
    const auto& g = r.link.ranges[k];
    const auto& t = truth[k];
    check(k, "o_s", g.send_overhead_us, t.send_overhead_us);
    check(k, "o_r", g.recv_overhead_us, t.recv_overhead_us);
    check(k, "O_s", g.send_overhead_per_byte_us, t.send_overhead_per_byte_us);
    check(k, "O_r", g.recv_overhead_per_byte_us, t.recv_overhead_per_byte_us);
    check(k, "g", g.gap_us, t.gap_us);
    check(k, "G", g.gap_per_byte_us, t.gap_per_byte_us);
  }
  std::printf("| %-62s | %-18s | %6.3f %% | %6.4f %% | %s|\n", c.name.c_str(), found.c_str(),
              100 * worst, 100 * r.calibrated_check.max_abs_all, open.c_str());
}

INSTANTIATE_TEST_SUITE_P(VirtualNetworks, LoggpGrid, ::testing::ValuesIn(grid()),
                         [](const ::testing::TestParamInfo<Case>& param) {
                           return fmt::format("case{:02d}", param.index);
                         });

}  // namespace
}  // namespace commgauge::measure
