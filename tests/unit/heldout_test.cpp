// The held-out validation's measurement against the virtual network: its ping-pong must equal
// what the link's own closed form predicts (the virtual network obeys it to the picosecond).

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
  HeldOutOptions o;
  o.pingpong_sizes = {3, 700, 12288, 12289, 50000};  // both sides of the rendezvous switch
  o.collective_sizes = {8, 64};  // the virtual network has no collectives: skipped
  o.rounds = 3;
  o.seed = 5;
  net::VirtualNetwork net(link);
  HeldOutResult r;
  net.run([&](net::Transport& t) {
    if (auto x = measure_heldout(t, o, nullptr)) r = std::move(*x);
  });
  EXPECT_FALSE(r.collectives);
  EXPECT_EQ(r.seed, 5u);
  ASSERT_EQ(r.points.size(), o.pingpong_sizes.size());
  const auto m = model::make_model("loggps", link);
  for (const auto& p : r.points) {
    EXPECT_EQ(p.kind, HeldOutKind::pingpong);
    EXPECT_EQ(p.rounds_us.size(), 3u);
    EXPECT_NEAR(p.time.median_us, model::to_microseconds(m.round_trip(p.bytes)) / 2, 1e-6)
        << p.bytes;
  }
}

TEST(HeldOut, BadOptionsAreRejected) {
  HeldOutOptions o;
  o.rounds = 0;
  EXPECT_THROW(o.validate(), InputError);
  o = {};
  o.pingpong_sizes = {0};
  EXPECT_THROW(o.validate(), InputError);
}

}  // namespace
}  // namespace commgauge::measure
