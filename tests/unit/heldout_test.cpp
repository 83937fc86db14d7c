// The held-out validation against the virtual network: its cells ride in loggp's first rounds,
// and its ping-pong must equal what the link's own closed form predicts (the virtual network
// obeys it to the picosecond).

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "link_fixtures.hpp"
#include "measure/heldout.hpp"
#include "model/models.hpp"
#include "net/virtual_network.hpp"

namespace commgauge::measure {
namespace {

TEST(HeldOut, MidpointsAreTheSizesASweepSkips) {
  EXPECT_EQ(midpoints({1, 4, 16, 17}), (std::vector<std::uint64_t>{2, 8}));
  EXPECT_TRUE(midpoints({5}).empty());
}

TEST(HeldOut, PingPongOnTheVirtualNetworkIsWhatItsLinkPredicts) {
  const auto link = commgauge::testing::loggps_link(model::Progress::dependent);
  LoggpOptions o;
  o.heldout_sizes = {3, 700, 12288, 12289, 50000};  // both sides of the rendezvous switch
  o.seed = 5;
  net::VirtualNetwork net(link);
  std::optional<LoggpResult> loggp;
  net.run([&](net::Transport& t) {
    if (auto x = measure_loggp(t, o, nullptr)) loggp = std::move(x);
  });
  ASSERT_TRUE(loggp);
  const HeldOutResult r = heldout_of(*loggp);
  EXPECT_FALSE(r.collectives);
  EXPECT_EQ(r.seed, 5u);
  ASSERT_EQ(r.points.size(), o.heldout_sizes.size());
  const auto m = model::make_model("loggps", link);
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const auto& p = r.points[i];
    EXPECT_EQ(p.kind, HeldOutKind::pingpong);
    EXPECT_EQ(p.bytes, o.heldout_sizes[i]);
    EXPECT_EQ(p.rounds_us.size(), o.min_rounds);
    const double truth = model::to_microseconds(m.round_trip(p.bytes)) / 2;
    EXPECT_NEAR(p.time.median_us, truth, 1e-6) << p.bytes;
    EXPECT_NEAR(p.time.lower_us, truth, 1e-6) << p.bytes;
    EXPECT_NEAR(p.time.upper_us, truth, 1e-6) << p.bytes;
  }
}

// The virtual network has no collectives: asking for them is a clear error before anything is
// measured, on both ends (no hang).
TEST(HeldOut, CollectivesWhereTheTransportHasNoneAreAnError) {
  LoggpOptions o;
  o.heldout_collective_sizes = {8};
  net::VirtualNetwork net(commgauge::testing::loggps_link(model::Progress::dependent));
  EXPECT_THROW(net.run([&](net::Transport& t) { measure_loggp(t, o, nullptr); }), InputError);
}

TEST(HeldOut, BadSizesAreRejected) {
  LoggpOptions o;
  o.heldout_sizes = {0};
  EXPECT_THROW(o.validate(), InputError);
  o = {};
  o.heldout_collective_sizes = {0};
  EXPECT_THROW(o.validate(), InputError);
}

}  // namespace
}  // namespace commgauge::measure
