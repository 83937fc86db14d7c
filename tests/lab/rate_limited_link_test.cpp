// LogGP on a link whose truth is known: two network namespaces joined by a veth pair shaped
// with tc tbf at R Mbit/s. The TCP goodput that R allows is R x MSS / frame, computed from the
// link's MTU and the TCP options in use; loggp's 1/G must be within 5 % of it.

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
  EXPECT_NEAR(eq7, goodput_bytes_per_us, 0.05 * goodput_bytes_per_us);
  EXPECT_NEAR(calibrated, goodput_bytes_per_us, 0.05 * goodput_bytes_per_us);
}

}  // namespace
}  // namespace commgauge::testing
