#pragma once
// Runs a subcommand's measurement so that a failure on one MPI rank aborts the whole job
// (no rank is left waiting), after the failing rank has said why.

#include <cstdio>
#include <exception>

#include "net/launch.hpp"

namespace commgauge::cli {

template <class Fn>
void run_guarded(net::PairRunner& runner, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "commgauge: %s\n", e.what());
    std::fflush(stderr);
    runner.fail();  // MPI_Abort on MPI; returns on the other transports
    throw;
  }
}

}  // namespace commgauge::cli
