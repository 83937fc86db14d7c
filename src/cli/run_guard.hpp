#pragma once
// Runs a subcommand's measurement so that a failure on one MPI rank aborts the whole job
// (no rank is left waiting), after the failing rank has said why.

#include <exception>

#include "cli/failure.hpp"
#include "net/launch.hpp"

namespace commgauge::cli {

template <class Fn>
void run_guarded(net::PairRunner& runner, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception&) {
    // On MPI: says why, then aborts the job with the status main would return (an input error
    // is 2 there too); elsewhere main reports it.
    const Failure failure = describe_failure(parsed_command_line(), std::current_exception());
    runner.fail(failure.text.c_str(), failure.status);
    throw;
  }
}

}  // namespace commgauge::cli
