#pragma once
// Runs a subcommand's measurement so that a failure on one MPI rank aborts the whole job
// (no rank is left waiting), after the failing rank has said why.

#include <exception>

#include "net/launch.hpp"

namespace commgauge::cli {

template <class Fn>
void run_guarded(net::PairRunner& runner, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    runner.fail(e.what());  // on MPI: says why, then MPI_Abort; elsewhere main reports it
    throw;
  }
}

}  // namespace commgauge::cli
