#include "measure/prtt.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge::measure {

namespace {

// Command words (3 values per batch): kind | n << 8 | reps << 32; bytes; delay in picoseconds.
constexpr std::uint64_t kDone = 0xff;

std::uint64_t encode(const PrttSpec& s, std::uint32_t reps) {
  return static_cast<std::uint64_t>(s.kind) | (static_cast<std::uint64_t>(s.n) << 8) |
         (static_cast<std::uint64_t>(reps) << 32);
}

}  // namespace

std::vector<double> prtt_batch(net::Transport& t, const PrttSpec& spec, std::uint32_t reps) {
  if (spec.n < 1 || spec.n > 0xffffff) throw InputError("PRTT: n must be 1..16777215");
  if (!(spec.delay_us >= 0)) throw InputError("PRTT: the delay must be >= 0");
  t.send_value(encode(spec, reps));
  t.send_value(spec.bytes);
  t.send_value(static_cast<std::uint64_t>(std::llround(spec.delay_us * 1e6)));
  std::vector<double> times(reps);
  const std::size_t s = spec.bytes;
  for (auto& time : times) {
    const double t0 = t.now_us();
    t.send(s);
    for (std::uint32_t i = 1; i < spec.n; ++i) {
      if (spec.kind == PrttKind::client_delay) t.compute(spec.delay_us);
      t.send(s);
    }
    t.recv(s);
    time = t.now_us() - t0;
  }
  return times;
}

net::Counters serve_prtt(net::Transport& t) {
  for (;;) {
    const std::uint64_t word = t.recv_value();
    if ((word & 0xff) == kDone) break;
    const auto kind = static_cast<PrttKind>(word & 0xff);
    if (kind != PrttKind::client_delay && kind != PrttKind::server_delay) {
      throw TransportError(fmt::format("PRTT: unknown command {:#x}", word));
    }
    const auto n = static_cast<std::uint32_t>((word >> 8) & 0xffffff);
    const auto reps = static_cast<std::uint32_t>(word >> 32);
    const std::size_t s = t.recv_value();
    const double delay_us = static_cast<double>(t.recv_value()) / 1e6;
    for (std::uint32_t r = 0; r < reps; ++r) {
      t.recv(s);
      for (std::uint32_t i = 1; i < n; ++i) {
        if (kind == PrttKind::server_delay) t.compute(delay_us);
        t.recv(s);
      }
      t.send(s);
    }
  }
  const net::Counters mine = t.counters();
  t.send_value(mine.messages);
  t.send_value(mine.bytes);
  return mine;
}

net::Counters finish_prtt(net::Transport& t) {
  t.send_value(kDone);
  net::Counters dest;
  dest.messages = t.recv_value();
  dest.bytes = t.recv_value();
  return dest;
}

}  // namespace commgauge::measure
