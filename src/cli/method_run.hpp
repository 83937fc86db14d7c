#pragma once
// The common shape of a measuring subcommand: characterize the source's timer (seed 002 §3.1),
// run the method on both ends of the pair, and keep the source's result with its context.

#include <optional>

#include <nlohmann/json.hpp>

#include "cli/run_guard.hpp"
#include "measure/timer.hpp"
#include "net/launch.hpp"
#include "report/context.hpp"

namespace commgauge::cli {

template <class Result>
struct MethodRun {
  std::optional<Result> result;  ///< only in the reporting process
  nlohmann::json context;        ///< run context (report::run_context)
  measure::TimerCharacterization timer;
};

/// `fn(transport, timer)` runs the method on one end and returns its result (empty on the dest).
template <class Result, class Fn>
MethodRun<Result> run_method(net::PairRunner& runner, const measure::TimerOptions& timer_options,
                             const net::Job& job, Fn&& fn) {
  MethodRun<Result> out;
  nlohmann::json transport_context;
  run_guarded(runner, [&] {
    if (runner.reports())
      out.timer = measure::characterize_timer(runner.source_clock(), timer_options);
    runner.run(job, [&](net::Transport& t) {
      std::optional<Result> r = fn(t, out.timer);
      if (r) {
        out.result = std::move(r);
        transport_context = t.context();
      }
    });
  });
  if (out.result) out.context = report::run_context(transport_context, out.timer);
  return out;
}

}  // namespace commgauge::cli
