// LogGP on a link whose truth is known: two network namespaces joined by a veth pair shaped
// with tc tbf at R Mbit/s. The TCP goodput that R allows is R x MSS / frame, computed from the
// link's MTU and the TCP options in use; loggp's 1/G must be within 5 % of it, or G's own 95 %
// interval must be wider than that and hold the truth.

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../integration/process.hpp"
#include "lab_network.hpp"

namespace commgauge::testing {
namespace {

// Lab tests skip loudly when namespaces are not permitted, and fail instead under CI=true.

int read_sysctl(const std::string& path, int fallback) {
  std::ifstream in(path);
  int v = fallback;
  in >> v;
  return in ? v : fallback;
}

TEST(RateLimitedLink, LoggpFindsTheGoodputThatTbfAllows) {
  REQUIRE_LAB();
  const int rate_mbit = 200;
  TwoHostLab lab("cglab" + std::to_string(getpid() % 10000), 77, rate_mbit);
  ASSERT_TRUE(lab.ok());

  // Goodput from the link: each full segment carries MSS = MTU - 40 (IP, TCP) - 12 (timestamps,
  // if enabled) bytes of payload in a frame of MTU + 14 (Ethernet header) bytes on the wire.
  const int mtu = lab.mtu();
  const bool timestamps = read_sysctl("/proc/sys/net/ipv4/tcp_timestamps", 1) != 0;
  const double mss = mtu - 40 - (timestamps ? 12 : 0);
  const double frame = mtu + 14;
  const double goodput_bytes_per_us = rate_mbit * 1e6 / 8 / 1e6 * mss / frame;

  const std::string port = std::to_string(20000 + getpid() % 20000);
  Background server({"ip", "netns", "exec", lab.ns_b(), commgauge(), "serve", "--bind",
                     lab.address_b(), "--port", port, "--once"});
  ASSERT_FALSE(server.wait_for_stderr("listening on", std::chrono::seconds(10)).empty());
  const auto json = scratch_file("loggp-" + port + ".json");
  const auto o = run({"ip", "netns", "exec", lab.ns_a(), commgauge(), "loggp", "--transport", "tcp",
                      "--peer", lab.address_b() + ":" + port, "--max-size", "256KiB",
                      "--timer-trials", "1000", "--json", json.string()},
                     kMeasuringLimit);
  ASSERT_EQ(o.exit_code, 0) << (o.timed_out ? "timed out; " : "") << o.err;
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  // The range that holds the largest sizes, where the wire dominates G_all: seed 000's eq. (7)
  // slope there is the wire's G, and the calibrated set keeps it where the gap shows (tbf's
  // bucket lets the first few kB of a message pass at line rate, so PRTT(1,0,s) grows as
  // (s - bucket) G, which no non-negative LogGP(S) set could follow if G were fitted to it).
  const auto& seeds = j["seed_estimators"]["ranges"].back();
  const double eq7 = 1 / seeds["G_us_per_byte"].get<double>();
  const double calibrated = 1 / j["ranges"].back()["G_us_per_byte"].get<double>();
  std::printf(
      "tbf %d Mbit/s, MTU %d: goodput %.3f MB/s, eq. (7) 1/G = %.3f MB/s (%+.2f %%), calibrated "
      "1/G = %.3f MB/s (%+.2f %%)\n",
      rate_mbit, mtu, goodput_bytes_per_us, eq7,
      100 * (eq7 - goodput_bytes_per_us) / goodput_bytes_per_us, calibrated,
      100 * (calibrated - goodput_bytes_per_us) / goodput_bytes_per_us);
  // Within 5 % of the goodput, or the estimate's own 95 % interval says it cannot tell G to 5 %
  // and holds the truth: under two busy loops G's interval was +-49 % and +-66 % in two runs of
  // 2026-12-03 that read -7.2 % and +5.1 %. A number claimed precise and wrong still fails (that
  // day the calibrated set once read G = 0 with the interval [0, 0]: 1/G infinite).
  const double G_true = 1 / goodput_bytes_per_us;
  const auto honest = [&](const nlohmann::json& range, const char* what) {
    const double G = range["G_us_per_byte"].get<double>();
    const double lo = range["ci95"]["G_us_per_byte"][0].get<double>();
    const double hi = range["ci95"]["G_us_per_byte"][1].get<double>();
    const bool within = std::abs(1 / G - goodput_bytes_per_us) <= 0.05 * goodput_bytes_per_us;
    const bool says_unsure = (hi - lo) / 2 > 0.05 * G && lo <= G_true && G_true <= hi;
    std::printf("%s: G = %.5g us/B, 95 %% interval [%.5g, %.5g], truth %.5g: %s\n", what, G, lo, hi,
                G_true,
                within        ? "within 5 %"
                : says_unsure ? "unsure, truth inside"
                              : "WRONG");
    EXPECT_TRUE(within || says_unsure) << what;
  };
  honest(seeds, "eq. (7)");
  honest(j["ranges"].back(), "calibrated");
}

}  // namespace
}  // namespace commgauge::testing
