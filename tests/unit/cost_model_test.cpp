// The one cost function (DESIGN.md "One cost convention") against hand-computed costs.

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "model/cost.hpp"

namespace commgauge::model {
namespace {

LinkParams two_ranges() {
  LinkParams link;
  link.latency_us = 3.0;
  LinkRange eager;
  eager.from_bytes = 1;
  eager.send_overhead_us = 1.0;
  eager.recv_overhead_us = 1.4;
  eager.send_overhead_per_byte_us = 0.0002;
  eager.recv_overhead_per_byte_us = 0.0003;
  eager.gap_us = 2.0;
  eager.gap_per_byte_us = 0.0008;
  LinkRange rndv = eager;
  rndv.from_bytes = 12289;
  rndv.send_overhead_us = 2.5;
  rndv.recv_overhead_us = 2.0;
  rndv.send_overhead_per_byte_us = 0.0001;
  rndv.recv_overhead_per_byte_us = 0.0001;
  rndv.gap_us = 6.0;
  rndv.gap_per_byte_us = 0.0005;
  rndv.rendezvous = true;
  link.ranges = {eager, rndv};
  return link;
}

TEST(CostModel, EagerMessageCostsByHand) {
  const CostModel cost(two_ranges());
  const MessageCost c = cost.message(8);
  EXPECT_FALSE(c.rendezvous);
  EXPECT_EQ(c.send_overhead, 1'001'600_ps);  // 1 us + 8 x 0.2 ns
  EXPECT_EQ(c.transfer, 3'005'600_ps);       // 3 us + 7 x 0.8 ns: (k-1)G
  EXPECT_EQ(c.recv_overhead, 1'402'400_ps);  // 1.4 us + 8 x 0.3 ns
  EXPECT_EQ(c.gap, 2'005'600_ps);            // 2 us + 7 x 0.8 ns
  EXPECT_EQ(cost.blocking_one_way(8), Picoseconds{1'001'600 + 3'005'600 + 1'402'400});
}

// A range billed by pages charges every per-byte term for whole pages: 1 B and 4096 B as 4096 B,
// 4097 B as 8192 B; the message keeps its own size; the other range stays by the byte.
TEST(CostModel, ARangeBilledByPagesChargesWholePages) {
  LinkParams link = two_ranges();
  link.ranges[0].page_bytes = 4096;
  const CostModel cost(link);
  const auto billed_as = [&](std::uint64_t bytes, std::uint64_t billed) {
    const MessageCost c = cost.message(bytes);
    EXPECT_EQ(c.bytes, bytes);
    // o_s + kO_s with k = billed: 1 us + billed x 0.2 ns; (k-1)G with k = billed.
    EXPECT_EQ(c.send_overhead, Picoseconds{1'000'000 + static_cast<std::int64_t>(billed) * 200})
        << bytes;
    EXPECT_EQ(c.transfer, Picoseconds{3'000'000 + static_cast<std::int64_t>(billed - 1) * 800})
        << bytes;
    EXPECT_EQ(c.recv_overhead, Picoseconds{1'400'000 + static_cast<std::int64_t>(billed) * 300})
        << bytes;
  };
  billed_as(1, 4096);
  billed_as(4096, 4096);
  billed_as(4097, 8192);
  billed_as(12288, 12288);
  // The gap too: g + (billed - 1)G.
  EXPECT_EQ(cost.message(4097).gap, Picoseconds{2'000'000 + 8191 * 800});
  // The rendezvous range is by the byte: 12289 B costs 12289 B's per-byte terms.
  EXPECT_EQ(cost.message(12289).send_overhead, Picoseconds{2'500'000 + 12289 * 100});
  EXPECT_EQ(link.ranges[0].billed_bytes(0), 0u);
  EXPECT_EQ(link.ranges[1].billed_bytes(5000), 5000u);
  EXPECT_EQ(link.ranges[0].billed_bytes(UINT64_MAX), UINT64_MAX);  // saturates, never wraps
  // Past the fast path's 63-bit products (10^13 B at 2 * 10^6 fs a byte), on the 128-bit path:
  // billed by whole pages there too.
  LinkParams one;
  one.ranges.resize(1);
  one.ranges[0].gap_per_byte_us = 0.002;
  one.ranges[0].page_bytes = 4096;
  const std::uint64_t huge = 10'000'000'000'001;
  const std::uint64_t billed = (huge + 4095) / 4096 * 4096;
  EXPECT_EQ(one.ranges[0].billed_bytes(huge), billed);
  EXPECT_EQ(CostModel(one).message(huge).gap,
            Picoseconds{static_cast<std::int64_t>(billed - 1) * 2000});
}

// Billed by the pages the send buffer spans (measured over vader: the sender's start moves the
// page steps, the receiver's does not): from 16 B past a page's start 8177 B spans 3 pages where
// 8192 B from the start spans 2; from 2048 B past it 6145 B spans 3.
TEST(CostModel, ARangeBilledByPagesChargesThePagesTheSendBufferSpans) {
  LinkRange r;
  r.page_bytes = 4096;
  EXPECT_EQ(r.billed_bytes(8192, 0), 8192u);
  EXPECT_EQ(r.billed_bytes(8176, 16), 8192u);
  EXPECT_EQ(r.billed_bytes(8177, 16), 12288u);
  EXPECT_EQ(r.billed_bytes(6144, 2048), 8192u);
  EXPECT_EQ(r.billed_bytes(6145, 2048), 12288u);
  EXPECT_EQ(r.billed_bytes(4096, 4095), 8192u);
  EXPECT_EQ(r.billed_bytes(1, 4095), 4096u);
  EXPECT_EQ(r.billed_bytes(2, 4095), 8192u);
  EXPECT_EQ(r.billed_bytes(100, 4096 + 16), r.billed_bytes(100, 16));  // the offset within a page
  // An unknown start: the mean over the 256 starts 16 B apart, counted here one by one.
  for (std::uint64_t k : {1ull, 15ull, 16ull, 17ull, 33ull, 4080ull, 4081ull, 4095ull, 4096ull,
                          4097ull, 8192ull, 10000ull, 65536ull}) {
    std::uint64_t sum = 0;
    for (std::uint64_t o = 0; o < 4096; o += 16)
      sum += r.billed_bytes(k, o);
    EXPECT_EQ(r.billed_bytes(k, kUnknownPageOffset), sum / 256) << k;
  }
  // Pages of 32 B: two starts (0 and 16); of 16 B or less every start is a page's start.
  LinkRange small;
  small.page_bytes = 32;
  for (std::uint64_t k : {1ull, 16ull, 17ull, 32ull, 33ull, 49ull})
    EXPECT_EQ(small.billed_bytes(k, kUnknownPageOffset),
              (small.billed_bytes(k, 0) + small.billed_bytes(k, 16)) / 2)
        << k;
  small.page_bytes = 16;
  EXPECT_EQ(small.billed_bytes(17, kUnknownPageOffset), 32u);
  EXPECT_EQ(small.billed_bytes(32, kUnknownPageOffset), 32u);
  EXPECT_EQ(r.billed_bytes(8192, kUnknownPageOffset), 12288u - 16);
  EXPECT_EQ(r.billed_bytes(UINT64_MAX, kUnknownPageOffset), UINT64_MAX);  // saturates
  EXPECT_EQ(r.billed_bytes(UINT64_MAX - 4096, 4000), UINT64_MAX);
  // By the byte every start costs the same.
  EXPECT_EQ(LinkRange{}.billed_bytes(8177, kUnknownPageOffset), 8177u);
  // The cost model passes the start through: a rendezvous range billed by pages.
  LinkParams link;
  link.ranges.resize(1);
  link.ranges[0].gap_per_byte_us = 1e-6;  // 1 ps a byte
  link.ranges[0].page_bytes = 4096;
  const CostModel cost(link);
  EXPECT_EQ(cost.message(8192).transfer, Picoseconds{8191});
  EXPECT_EQ(cost.message(8192, 16).transfer, Picoseconds{12287});
  EXPECT_EQ(cost.message(8192, kUnknownPageOffset).transfer, Picoseconds{12287 - 16});
}

TEST(CostModel, RangeBoundaryIsFromBytes) {
  const CostModel cost(two_ranges());
  EXPECT_FALSE(cost.message(12288).rendezvous);
  EXPECT_TRUE(cost.message(12289).rendezvous);
  EXPECT_EQ(cost.link().rendezvous_threshold_bytes(), 12289u);
}

TEST(CostModel, RendezvousAddsRequestAndAcknowledgement) {
  const CostModel cost(two_ranges());
  const std::uint64_t k = 12289;
  const Picoseconds eager_part{(2'500'000 + 1'228'900) + (3'000'000 + 6'144'000) +
                               (2'000'000 + 1'228'900)};
  const Picoseconds handshake{2 * (2'500'000 + 3'000'000 + 2'000'000)};  // seed 004 T4 + T5
  EXPECT_EQ(cost.blocking_one_way(k), eager_part + handshake);
}

TEST(CostModel, ZeroBytesTransfersLikeOne) {
  const CostModel cost(two_ranges());
  EXPECT_EQ(cost.message(0).transfer, cost.message(1).transfer);
  EXPECT_EQ(cost.message(0).send_overhead, 1'000'000_ps);
}

TEST(CostModel, NegativeLatencyIsKept) {
  LinkParams link = two_ranges();
  link.latency_us = -0.5;
  const CostModel cost(link);
  EXPECT_EQ(cost.message(1).transfer, Picoseconds{-500'000});
  EXPECT_TRUE(link.latency_negative());
}

TEST(CostModel, PicosecondConversionRounds) {
  EXPECT_EQ(to_picoseconds(1.0), 1'000'000_ps);
  EXPECT_EQ(to_picoseconds(0.0000004), 0_ps);
  EXPECT_EQ(to_picoseconds(0.0000006), 1_ps);
  EXPECT_DOUBLE_EQ(to_microseconds(2'500'000_ps), 2.5);
}

TEST(CostModel, ACostPastTheClockIsAnErrorNotAWrappedTime) {
  const CostModel cost(two_ranges());
  // Rendezvous G = 0.5 ns per byte: the bound, 2^56 ps, is passed near 2^47 bytes.
  // 2^46 bytes: (2^46 - 1) x 500,000 fs passes 2^63 fs (the 128-bit path) and still fits.
  const std::uint64_t fits = std::uint64_t{1} << 46;
  EXPECT_EQ(cost.message(fits).transfer,
            3'000'000_ps + Picoseconds{static_cast<Picoseconds::rep>(fits - 1) * 500});
  EXPECT_THROW((void)cost.message(std::uint64_t{1} << 48), TimeRangeError);
  EXPECT_THROW((void)cost.message(~std::uint64_t{0}), TimeRangeError);  // n x fs overflows
}

TEST(LinkParams, ValuesTheClockCannotHoldAreRefused) {
  LinkParams link = two_ranges();
  link.ranges[1].gap_per_byte_us = 2e9;
  EXPECT_THROW(validate(link, "x.json"), InputError);
  link = two_ranges();
  link.latency_us = 1e12;
  EXPECT_THROW(validate(link, "x.json"), InputError);
  EXPECT_NO_THROW(validate(two_ranges(), "x.json"));
}

TEST(LinkParams, RangeLookup) {
  const LinkParams link = two_ranges();
  EXPECT_EQ(link.range_index(0), 0u);
  EXPECT_EQ(link.range_index(1), 0u);
  EXPECT_EQ(link.range_index(12288), 0u);
  EXPECT_EQ(link.range_index(12289), 1u);
  EXPECT_EQ(link.range_index(1u << 30), 1u);
  EXPECT_EQ(link.to_bytes(0), 12288u);
}

}  // namespace
}  // namespace commgauge::model
