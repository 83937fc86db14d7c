// The closed forms against hand-computed values, against the virtual network (which must agree
// to the picosecond), and their reductions to LogGP.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "link_fixtures.hpp"
#include "model/closed_forms.hpp"
#include "model/models.hpp"
#include "net/virtual_network.hpp"

namespace commgauge::model {
namespace {

using commgauge::testing::loggp_link;
using commgauge::testing::loggps_link;
using net::Role;
using net::Transport;

constexpr Picoseconds us(double x) {
  return Picoseconds{static_cast<Picoseconds::rep>(x * 1e6 + (x >= 0 ? 0.5 : -0.5))};
}

// ---- hand-computed values ----

TEST(ClosedForms, LogGPOneWayAndPrtt) {
  const CostModel c(loggp_link(5, 1.5, 4, 0.001));
  EXPECT_EQ(one_way(c, 1), us(8));      // o + L + o
  EXPECT_EQ(one_way(c, 1001), us(9));   // + 1000 G
  EXPECT_EQ(round_trip(c, 1), us(16));  // seed 000 eq. (1): 2 (L + 2o)
  // eq. (5): PRTT(16,0,1) = PRTT(1,0,1) + 15 max(o, G_all) = 16 + 15 x 4
  EXPECT_EQ(prtt(c, 16, 0_ps, 1), us(16 + 15 * 4));
  // d = 10 > G_all: 16 + 15 (o + d) = 16 + 15 x 11.5
  EXPECT_EQ(prtt(c, 16, us(10), 1), us(16 + 15 * 11.5));
  // Server delay: the receive cost shows: 16 + 15 (d + o_r)
  EXPECT_EQ(prtt_server_delay(c, 16, us(10), 1), us(16 + 15 * 11.5));
}

TEST(ClosedForms, LogGPSTermsAtTheBoundaries) {
  const CostModel c(loggps_link(Progress::independent));  // eager below 12289, rendezvous from
  // k = S - 1: eager, T1 + T2 + T3.
  const auto e = loggps_terms(c, 12288, 0_ps, 0_ps);
  EXPECT_FALSE(e.rendezvous);
  EXPECT_EQ(e.t1, us(1.0 + 12288 * 0.0002));
  EXPECT_EQ(e.t2, us(3.0 + 12287 * 0.0008));
  EXPECT_EQ(e.t3, us(1.4 + 12288 * 0.0003));
  EXPECT_EQ(loggps_send_time(c, 12288, 0_ps, 0_ps), e.t1);  // Table 4 eq. (4)
  // k = S: rendezvous; receiver early: T4 = o' + L + o', T5 = o' + L + o'.
  const auto r = loggps_terms(c, 12289, 0_ps, 0_ps);
  EXPECT_TRUE(r.rendezvous);
  EXPECT_EQ(r.t4, us(2.5 + 3 + 2.0));
  EXPECT_EQ(r.t5, us(2.5 + 3 + 2.0));
  EXPECT_EQ(loggps_send_time(c, 12289, 0_ps, 0_ps), r.t4 + r.t5 + r.t1);  // eq. (5)
  // Receiver late (t_r - t_s = 100 us): T4 = 100 + o'_r.
  EXPECT_EQ(loggps_terms(c, 12289, 0_ps, us(100)).t4, us(100 + 2.0));
  // eq. (9): max(o' + L - 100, 0) + o' + T5 + T1 + T2 + T3
  EXPECT_EQ(loggps_recv_time(c, 12289, 0_ps, us(100)), us(2.0) + r.t5 + r.t1 + r.t2 + r.t3);
  // eq. (7): eager receive called 1 us after the send: max(T1 + T2 - 1, 0) + T3
  EXPECT_EQ(loggps_recv_time(c, 8, 0_ps, us(1)), us(1.0016 + 3.0056 - 1) + us(1.4024));
}

TEST(ClosedForms, LogGPSFromSeed004Table5Shape) {
  LogGPS p;  // Myrinet's thresholds from seed 004 Table 5 (s = 8191, S = 16383)
  p.latency_us = 8.5;
  p.overhead_us = 6.73;
  p.send_per_byte_short_us = 0.00502;
  p.recv_per_byte_short_us = 0.00472;
  p.gap_per_byte_short_us = 0.01517;
  p.send_per_byte_long_us = 0.00480;
  p.recv_per_byte_long_us = 0.00386;
  p.gap_per_byte_long_us = 0.00004;
  p.short_bytes = 8191;
  p.rendezvous_bytes = 16383;
  const CostModel c(to_link(p));
  EXPECT_EQ(c.message(8190).gap, us(8189 * 0.01517));                  // short: k = s - 1
  EXPECT_EQ(c.message(8191).send_overhead, us(6.73 + 8191 * 0.0048));  // long from s
  EXPECT_FALSE(c.message(16382).rendezvous);                           // k = S - 1
  EXPECT_TRUE(c.message(16383).rendezvous);                            // k = S
}

TEST(ClosedForms, LogGPOCombinations) {
  LogGPO p;
  p.latency_us = 3;
  p.gap_per_byte_us = 0.0008;
  p.rendezvous_bytes = 12289;
  p.control_us = 0.7;
  p.init_us = 1.0;
  p.copy_us = 0.5;
  p.progress = Progress::dependent;
  p.mechanism = TransferMechanism::RAT;
  EXPECT_NO_THROW(to_link(p));
  p.mechanism = TransferMechanism::RTA;  // the receiver pulls (no formulas in seed 001)
  EXPECT_TRUE(to_link(p).ranges.back().pulled());
  p.progress = Progress::independent;
  EXPECT_FALSE(to_link(p).ranges.back().pulled());
  p.mechanism = TransferMechanism::RAT;
  EXPECT_THROW(to_link(p), InputError);  // ICP with RAT: no formulas
  p.mechanism = TransferMechanism::TA;
  EXPECT_THROW(to_link(p), InputError);
}

TEST(ClosedForms, BlockingLogGPOTcIsSeed001sWithOcZero) {
  // seed 001: rendezvous Tc = 4O' + 3L + Oi + G(K-1) when the receiver is ready (Oc = 0).
  LogGPO p;
  p.latency_us = 3;
  p.gap_per_byte_us = 0.0008;
  p.rendezvous_bytes = 1000;
  p.control_us = 0.7;
  p.init_us = 1.0;
  p.init_per_byte_us = 0.0001;
  p.copy_us = 0;
  p.progress = Progress::dependent;
  const CostModel c(to_link(p));
  const std::uint64_t k = 5000;
  EXPECT_EQ(one_way(c, k), us(4 * 0.7 + 3 * 3 + 1.0 + 5000 * 0.0001 + 4999 * 0.0008));
}

// ---- agreement with the virtual network ----

Picoseconds virtual_prtt(const LinkParams& link, std::uint32_t n, double d_us, std::uint64_t k,
                         bool server_delay) {
  net::VirtualNetwork net(link);
  double t = 0;
  net.run([&](Transport& tr) {
    if (tr.role() == Role::source) {
      const double t0 = tr.now_us();
      tr.send(k);
      for (std::uint32_t i = 1; i < n; ++i) {
        if (!server_delay) tr.compute(d_us);
        tr.send(k);
      }
      tr.recv(k);
      t = tr.now_us() - t0;
    } else {
      tr.recv(k);
      for (std::uint32_t i = 1; i < n; ++i) {
        if (server_delay) tr.compute(d_us);
        tr.recv(k);
      }
      tr.send(k);
    }
  });
  return to_picoseconds(t);
}

TEST(ClosedFormsMatchVirtualNetwork, Prtt) {
  for (const auto& link : {loggp_link(), loggp_link(0.5, 2.0, 0.5, 0.0001),
                           loggps_link(Progress::independent), loggps_link(Progress::dependent)}) {
    const CostModel c(link);
    for (std::uint64_t k : {1u, 100u, 12288u, 12289u, 200000u}) {
      for (std::uint32_t n : {1u, 2u, 16u}) {
        for (double d : {0.0, 1.0, 50.0}) {
          EXPECT_EQ(prtt(c, n, us(d), k), virtual_prtt(link, n, d, k, false))
              << "k=" << k << " n=" << n << " d=" << d;
          EXPECT_EQ(prtt_server_delay(c, n, us(d), k), virtual_prtt(link, n, d, k, true))
              << "server delay k=" << k << " n=" << n << " d=" << d;
        }
      }
    }
  }
}

// Eager sends that complete on the receiver's acknowledgement (Tm = TA), both progress modes;
// a small L, a large one (the reply then reaches the client before its own ack does), and a
// send overlap: every order of the client's and the server's actions.
TEST(ClosedFormsMatchVirtualNetwork, PrttWithAcknowledgedEagerSends) {
  using commgauge::testing::acknowledged_link;
  for (const Progress p : {Progress::dependent, Progress::independent}) {
    for (const auto& link :
         {acknowledged_link(p), acknowledged_link(p, 6.0), acknowledged_link(p, 0.0, 0.25)}) {
      const CostModel c(link);
      ASSERT_TRUE(c.message(300).acknowledged);
      for (std::uint64_t k : {257u, 3000u, 12288u}) {
        for (std::uint32_t n : {1u, 2u, 16u}) {
          for (double d : {0.0, 0.2, 1.0, 50.0}) {
            const auto what = ::testing::Message() << to_string(p) << " L=" << link.latency_us
                                                   << " k=" << k << " n=" << n << " d=" << d;
            EXPECT_EQ(prtt(c, n, us(d), k), virtual_prtt(link, n, d, k, false)) << what;
            EXPECT_EQ(prtt_server_delay(c, n, us(d), k), virtual_prtt(link, n, d, k, true))
                << "server delay " << what;
          }
        }
        EXPECT_EQ(round_trip(c, k), virtual_prtt(link, 1, 0, k, false)) << k;
      }
    }
  }
}

TEST(ClosedFormsMatchVirtualNetwork, PrttOverAPulledRendezvous) {
  using commgauge::testing::pulled_link;
  for (const auto& link : {pulled_link(), pulled_link(6.0), pulled_link(0.0, 0.25)}) {
    const CostModel c(link);
    ASSERT_TRUE(c.message(20000).pulled);
    for (std::uint64_t k : {12289u, 20000u, 500000u}) {
      for (std::uint32_t n : {1u, 2u, 16u}) {
        for (double d : {0.0, 0.2, 1.0, 50.0}) {
          const auto what = ::testing::Message()
                            << "L=" << link.latency_us << " k=" << k << " n=" << n << " d=" << d;
          EXPECT_EQ(prtt(c, n, us(d), k), virtual_prtt(link, n, d, k, false)) << what;
          EXPECT_EQ(prtt_server_delay(c, n, us(d), k), virtual_prtt(link, n, d, k, true))
              << "server delay " << what;
        }
      }
      EXPECT_EQ(round_trip(c, k), virtual_prtt(link, 1, 0, k, false)) << k;
    }
  }
}

// o_u: a receive posted after its eager data arrived costs o_r + o_u (the unexpected path), the
// answer to a rendezvous request that came before its receive o_u more.
// The closed forms decide, message by message, which receives are posted late - every
// server-delay receive after the first, the PRTT(n,0,s) receives of a server slower than the
// sends, a reply that reaches a client still inside its send - as the virtual network does.
TEST(ClosedFormsMatchVirtualNetwork, PrttWithUnexpectedReceivesCostingOu) {
  using commgauge::testing::acknowledged_link;
  using commgauge::testing::pulled_link;
  std::vector<LinkParams> links = {loggp_link(), loggp_link(0.5, 2.0, 0.5, 0.0001),
                                   loggps_link(Progress::independent),
                                   loggps_link(Progress::dependent), pulled_link()};
  for (const Progress p : {Progress::dependent, Progress::independent}) {
    links.push_back(acknowledged_link(p));
    links.push_back(acknowledged_link(p, 6.0));
    links.push_back(acknowledged_link(p, 0.0, 0.25));
  }
  std::size_t late_cases = 0, late_rendezvous = 0;
  for (auto link : links) {
    for (auto& r : link.ranges)
      r.unexpected_recv_us = 0.37;
    // A receiver slower than its sender (o_r above o_s and g) posts PRTT(n,0,s)'s receives late.
    auto slow_receiver = link;
    slow_receiver.ranges.front().recv_overhead_us += 1.3;
    for (const auto& l : {link, slow_receiver}) {
      const CostModel c(l);
      LinkParams without = l;
      for (auto& r : without.ranges)
        r.unexpected_recv_us = 0;
      const CostModel c0(without);
      for (std::uint64_t k : {1u, 300u, 3000u, 12289u, 200000u}) {
        for (std::uint32_t n : {2u, 16u}) {
          for (double d : {0.0, 1.0, 50.0}) {
            const auto what = ::testing::Message() << "k=" << k << " n=" << n << " d=" << d;
            EXPECT_EQ(prtt(c, n, us(d), k), virtual_prtt(l, n, d, k, false)) << what;
            EXPECT_EQ(prtt_server_delay(c, n, us(d), k), virtual_prtt(l, n, d, k, true))
                << "server delay " << what;
            if (prtt_server_delay(c, n, us(d), k) != prtt_server_delay(c0, n, us(d), k)) {
              ++late_cases;
              if (c.message(k).rendezvous) ++late_rendezvous;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(late_cases, 100u);  // o_u is charged, not only agreed on
  EXPECT_GT(late_rendezvous, 20u);
}

TEST(ClosedForms, APulledRendezvousCostsTheRequestTheTransferAndTheFin) {
  // By hand (pulled_link, k = 20000): o'_s = 0.35, L = 0.5, o'_r = 0.45; T1 = 2.5 + 2 us,
  // T2 = 0.5 + 19999 * 0.0008 us, T3 = 2.0 + 2 us. One way: o'_s + L + o'_r + T1 + T2 + o'_s
  // + T3; the pushed rendezvous of the same range has a second control message, o'_s + L + o'_r,
  // and no FIN.
  auto link = commgauge::testing::pulled_link();
  const std::uint64_t k = 20000;
  const Picoseconds t1 = us(4.5), t2 = us(0.5 + 19999 * 0.0008), t3 = us(4.0);
  EXPECT_EQ(one_way(CostModel(link), k), us(0.35 + 0.5 + 0.45) + t1 + t2 + us(0.35) + t3);
  link.ranges.back().transfer = "RAT";
  EXPECT_EQ(one_way(CostModel(link), k), 2 * us(0.35 + 0.5 + 0.45) + t1 + t2 + t3);
}

TEST(ClosedForms, AnAcknowledgedSendCostsOneAckMoreThanAnEagerOne) {
  // PRTT(n,0,s) of eager sends: the client's cycle is max(T1, g + (s-1)G, T3); acknowledged
  // (DCP), each send waits for its ack: T1 + T2 + o'_s + L + o'_r per message.
  auto link = commgauge::testing::acknowledged_link(Progress::dependent, 2.0);
  const CostModel c(link);
  const std::uint64_t k = 1001;
  const MessageCost m = c.message(k);
  const Picoseconds t1 = us(0.6 + 1001 * 0.0002), t2 = us(2.0 + 1000 * 0.0008),
                    t3 = us(0.9 + 1001 * 0.0003);
  ASSERT_EQ(m.send_overhead, t1);
  ASSERT_EQ(m.transfer, t2);
  ASSERT_EQ(m.recv_overhead, t3);
  EXPECT_EQ(one_way(c, k), t1 + t2 + us(0.3) + t3);
  const Picoseconds cycle = t1 + t2 + us(0.3 + 2.0 + 0.4);
  EXPECT_EQ(prtt(c, 16, 0_ps, k) - prtt(c, 1, 0_ps, k), 15 * cycle);
  link.ranges[1].transfer = "";  // the same range, eager without acknowledgement
  const CostModel eager(link);
  EXPECT_EQ(prtt(eager, 16, 0_ps, k) - prtt(eager, 1, 0_ps, k),
            15 * std::max({t1, us(2.0 + 1000 * 0.0008), t3}));
}

TEST(ClosedFormsMatchVirtualNetwork, LogGPSSendAndRecvTimes) {
  const auto link = loggps_link(Progress::independent);
  const CostModel c(link);
  for (std::uint64_t k : {8u, 12288u, 12289u, 100000u}) {
    for (double late : {0.0, 2.0, 7.0, 100.0}) {  // t_r - t_s
      net::VirtualNetwork net(link);
      double send_time = 0, recv_time = 0;
      net.run([&](Transport& t) {
        if (t.role() == Role::source) {
          const double t0 = t.now_us();
          t.send(k);
          send_time = t.now_us() - t0;
        } else {
          t.compute(late);
          const double t0 = t.now_us();
          t.recv(k);
          recv_time = t.now_us() - t0;
        }
      });
      EXPECT_EQ(loggps_send_time(c, k, 0_ps, us(late)), to_picoseconds(send_time))
          << k << " " << late;
      EXPECT_EQ(loggps_recv_time(c, k, 0_ps, us(late)), to_picoseconds(recv_time))
          << k << " " << late;
      // Table 3's communication time: the rendezvous one includes waiting for the receiver
      // (T4); the eager one is the cost alone, and the data waits for a late receive.
      const auto terms = loggps_terms(c, k, 0_ps, us(late));
      const Picoseconds delivered = to_picoseconds(late + recv_time);
      if (terms.rendezvous) {
        EXPECT_EQ(loggps_communication_time(c, k, 0_ps, us(late)), delivered);
      } else {
        EXPECT_EQ(std::max(terms.t1 + terms.t2, us(late)) + terms.t3, delivered);
        EXPECT_EQ(loggps_communication_time(c, k, 0_ps, us(late)), terms.t1 + terms.t2 + terms.t3);
      }
    }
  }
}

// Every overlap case against the virtual network, receives posted before and after the data or
// the request, with o_u = 0 and with a late receive's o_u charged.
TEST(ClosedFormsMatchVirtualNetwork, IsendComputeWaitAllCasesBothArrivalOrders) {
  for (auto [p, link] : {std::pair{Progress::independent, loggps_link(Progress::independent)},
                         std::pair{Progress::dependent, loggps_link(Progress::dependent)},
                         std::pair{Progress::independent, commgauge::testing::acknowledged_link(
                                                              Progress::independent, 3.0)},
                         std::pair{Progress::dependent,
                                   commgauge::testing::acknowledged_link(Progress::dependent, 3.0)},
                         std::pair{Progress::dependent, commgauge::testing::pulled_link(3.0)}}) {
    for (const double o_u : {0.0, 0.37}) {
      for (auto& r : link.ranges)
        r.unexpected_recv_us = o_u;
      const CostModel c(link);
      for (std::uint64_t k : {8u, 2000u, 20000u, 500000u}) {
        for (double comp : {0.0, 5.0, 1000.0}) {
          for (double t_r : {0.0, 2.0, 30.0}) {  // receive posted before and after the request
            net::VirtualNetwork net(link);
            double times[6] = {};
            net.run([&](Transport& t) {
              const bool src = t.role() == Role::source;
              if (!src) t.compute(t_r);
              const double a = t.now_us();
              net::Request r = src ? t.isend(k) : t.irecv(k);
              const double b = t.now_us();
              t.compute(comp);
              const double w = t.now_us();
              t.wait(r);
              const double e = t.now_us();
              const int o = src ? 0 : 3;
              times[o] = b - a;      // time in the nonblocking call
              times[o + 1] = e - w;  // time in the wait
              times[o + 2] = e;      // done
            });
            const OverlapCosts m = isend_compute_wait(c, k, us(comp), us(t_r));
            EXPECT_EQ(m.mechanism == OverlapCase::eager_TA,
                      c.message(k).acknowledged && !c.message(k).rendezvous);
            EXPECT_EQ(m.mechanism == OverlapCase::dcp_RTA, c.message(k).pulled);
            const auto what = ::testing::Message()
                              << "progress " << to_string(p) << " k=" << k << " comp=" << comp
                              << " t_r=" << t_r << " o_u=" << o_u;
            EXPECT_EQ(m.isend, to_picoseconds(times[0])) << what;
            EXPECT_EQ(m.osw, to_picoseconds(times[1])) << what;
            EXPECT_EQ(m.sender_done, to_picoseconds(times[2])) << what;
            EXPECT_EQ(m.irecv, to_picoseconds(times[3])) << what;
            EXPECT_EQ(m.orw, to_picoseconds(times[4])) << what;
            EXPECT_EQ(m.receiver_done, to_picoseconds(times[5])) << what;
          }
        }
      }
    }
  }
}

TEST(ClosedFormsMatchVirtualNetwork, RoundTrip) {
  for (const auto& link : {loggp_link(), loggps_link(Progress::dependent)}) {
    const CostModel c(link);
    for (std::uint64_t k : {1u, 12289u, 65536u}) {
      net::VirtualNetwork net(link);
      double t = 0;
      net.run([&](Transport& tr) {
        if (tr.role() == Role::source) {
          tr.send(k);  // the first round warms the gap state up
          tr.recv(k);
          const double t0 = tr.now_us();
          tr.send(k);
          tr.recv(k);
          t = tr.now_us() - t0;
        } else {
          for (int i = 0; i < 2; ++i) {
            tr.recv(k);
            tr.send(k);
          }
        }
      });
      EXPECT_EQ(round_trip(c, k), to_picoseconds(t)) << k;
    }
  }
}

// ---- reductions: LogGP-only parameters make the three models one ----

TEST(Models, LogGPSAndLogGPOReduceToLogGP) {
  const LinkParams link = loggp_link(5, 1.5, 4, 0.001);  // one range, no O, no rendezvous
  const CommModel a = make_model("loggp", link);
  const CommModel b = make_model("loggps", link);
  const CommModel o = make_model("loggpo", link);
  for (std::uint64_t k : {1u, 1000u, 1u << 20}) {
    EXPECT_EQ(a.one_way(k), b.one_way(k));
    EXPECT_EQ(a.one_way(k), o.one_way(k));
    EXPECT_EQ(a.round_trip(k), b.round_trip(k));
    EXPECT_EQ(a.prtt(16, us(3), k), o.prtt(16, us(3), k));
    const auto x = a.isend_compute_wait(k, us(50), 0_ps);
    const auto y = o.isend_compute_wait(k, us(50), 0_ps);
    EXPECT_EQ(x.sender_done, y.sender_done);
    EXPECT_EQ(x.receiver_done, y.receiver_done);
  }
}

TEST(Models, LogGPDropsTheHandshakeAndPerByteOverheads) {
  const LinkParams link = loggps_link(Progress::dependent);
  const CommModel a = make_model("loggp", link);
  const CommModel b = make_model("loggps", link);
  const std::uint64_t k = 100000;
  EXPECT_LT(a.one_way(k), b.one_way(k));
  EXPECT_FALSE(a.cost().message(k).rendezvous);
  EXPECT_EQ(a.cost().message(k).send_overhead, us(2.5));
  // LogGPS has no notion of progress: its rendezvous proceeds as with independent progress.
  EXPECT_EQ(b.cost().message(k).progress, Progress::independent);
  EXPECT_THROW(make_model("logp", link), InputError);
}

TEST(Models, RegistryListsTheThree) {
  std::vector<std::string> names;
  for (const auto& m : model_infos())
    names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"loggp", "loggps", "loggpo"}));
}

}  // namespace
}  // namespace commgauge::model
