// Bandwidth sharing on emulated nodes with real links: four network namespaces joined through
// a bridge, each direction of each node's link shaped with tbf. `commgauge share` runs seed
// 003's schemes over TCP between them, `share-fit` fits the GigE model, and the fitted model
// must predict the measured penalties with E_abs under 15 % (the fair model's is reported).

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

TEST(SharingLab, GigeModelFittedOnRealSharingPredictsThePenalties) {
  REQUIRE_LAB();
  StarLab lab("cgl" + std::to_string(getpid() % 1000), 4, 100);
  ASSERT_TRUE(lab.ok());
  const auto dir = scratch_file("sharing");
  std::filesystem::create_directories(dir);
  const std::vector<std::string> schemes = {"fig2-2", "fig2-3", "lab-incoming", "lab-incomeoutgo"};
  std::vector<std::string> measured;
  for (const auto& name : schemes) {
    const auto json = dir / (name + ".json");
    const auto o = run({"ip",
                        "netns",
                        "exec",
                        lab.switch_ns(),
                        commgauge(),
                        "share",
                        "--transport",
                        "tcp",
                        "--scheme",
                        std::string(COMMGAUGE_SOURCE_DIR) + "/examples/schemes/" + name + ".sch",
                        "--size",
                        "2MiB",
                        "--iterations",
                        "3",
                        "--tcp-nodes",
                        lab.tcp_nodes(),
                        "--coordinator-bind",
                        lab.switch_address(),
                        "--json",
                        json.string()},
                       std::chrono::seconds(60));
    ASSERT_EQ(o.exit_code, 0) << name << ": " << o.err;
    EXPECT_FALSE(read_json(json)["functional_only"].get<bool>());
    std::printf("%s", o.out.c_str());
    measured.push_back(json.string());
  }
  // Two flows leaving one node share its link: each gets about half.
  const auto two = read_json(dir / "fig2-2.json");
  for (const auto& c : two["communications"]) {
    EXPECT_NEAR(c["measured_penalty"].get<double>(), 2.0, 0.5) << c.dump();
  }
  const auto params = dir / "gige.json";
  std::vector<std::string> fit = {commgauge(), "share-fit", "--json", params.string()};
  for (const auto& m : measured)
    fit.insert(fit.end(), {"--measured", m});
  const auto f = run(fit);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  std::printf("%s", f.out.c_str());
  // E_abs over every communication of every scheme, per model.
  auto e_abs = [&](const std::string& model) {
    double sum = 0;
    int n = 0;
    for (std::size_t k = 0; k < schemes.size(); ++k) {
      const auto out = dir / (schemes[k] + "-" + model + ".json");
      const auto e =
          run({commgauge(), "share", "--scheme",
               std::string(COMMGAUGE_SOURCE_DIR) + "/examples/schemes/" + schemes[k] + ".sch",
               "--size", "2MiB", "--model", model, "--params", params.string(), "--evaluate",
               measured[k], "--json", out.string()});
      EXPECT_EQ(e.exit_code, 0) << e.err;
      const auto doc = read_json(out);  // (a temporary would die before the loop body)
      for (const auto& c : doc["communications"]) {
        sum += std::abs(c["e_rel_percent"].get<double>());
        ++n;
      }
    }
    return sum / n;
  };
  const double gige = e_abs("gige");
  const double fair = e_abs("fair");
  std::printf("E_abs over %zu schemes: GigE (fitted) %.1f %%, fair %.1f %%\n", schemes.size(), gige,
              fair);
  EXPECT_LT(gige, 15.0);
}

}  // namespace
}  // namespace commgauge::testing
