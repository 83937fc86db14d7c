#pragma once
// The parametrized round trip time PRTT(n, d, s) of seed 000 (Listing 1), measured in batches
// that the source commands and the dest obeys, so one protocol serves every transport.
//
// client_delay (Listing 1): the client sends n messages of s bytes with a busy delay d between
//   them; the server receives the n, then replies with one message of s bytes.
// server_delay (commgauge's addition for o_r): the client sends n messages back to back; the
//   server receives the first, then before each further receive computes for d, so that the
//   messages wait for it and each receive's cost shows; then it replies.

#include <cstdint>
#include <vector>

#include "net/transport.hpp"

namespace commgauge::measure {

enum class PrttKind : std::uint8_t { client_delay = 0, server_delay = 1 };

struct PrttSpec {
  PrttKind kind = PrttKind::client_delay;
  std::uint32_t n = 1;      ///< messages in the round (>= 1)
  std::uint64_t bytes = 1;  ///< s
  double delay_us = 0;      ///< d (busy computation, never a sleep)
};

/// Source: tells the dest what to do and times `repetitions` rounds; returns their times (us).
std::vector<double> prtt_batch(net::Transport& source, const PrttSpec& spec,
                               std::uint32_t repetitions);

/// Dest: obeys batches until the source ends the session; returns its own counters.
net::Counters serve_prtt(net::Transport& dest);

/// Source: ends the dest's serve_prtt loop and returns the dest's counters.
net::Counters finish_prtt(net::Transport& source);

}  // namespace commgauge::measure
