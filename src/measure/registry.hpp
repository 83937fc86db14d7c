#pragma once
// The methods a TCP peer (`commgauge serve`) can run for a client, by name.

#include "net/tcp_session.hpp"
#include "net/transport.hpp"

namespace commgauge::measure {

/// Runs the dest end of `job` ("latency", ...). Throws InputError for an unknown method or
/// malformed parameters.
void run_dest_job(net::Transport& transport, const net::Job& job);

}  // namespace commgauge::measure
