#pragma once
// The common shape of a measuring subcommand: characterize the source's timer (seed 002 §3.1),
// run the method on both ends of the pair, and keep the source's result with its context.

#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"

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
      t.release_buffers();
      if (r) {
        out.result = std::move(r);
        transport_context = t.context();
      }
    });
  });
  if (out.result) out.context = report::run_context(transport_context, out.timer);
  return out;
}

/// A method whose result may be partial (a Result with an `interrupted` reason): `measure(t,
/// timer)` runs it; `publish(result, timer, context)` prints it and writes its files. A result
/// a transport failure cut short is published inside the run, before the runner ends the
/// session as failed, and the failure is reported as "<reason> (<saved(result)>)" (exit 3): what
/// was measured is never lost. A complete result is published after the run.
template <class Result, class Measure, class Publish, class Saved>
void run_and_publish(net::PairRunner& runner, const measure::TimerOptions& timer_options,
                     const net::Job& job, Measure&& measure, Publish&& publish, Saved&& saved) {
  auto run = run_method<Result>(
      runner, timer_options, job,
      [&](net::Transport& t, const measure::TimerCharacterization& timer) {
        std::optional<Result> result = measure(t, timer);
        if (result && !result->interrupted.empty()) {
          publish(*result, timer, report::run_context(t.context(), timer));
          throw TransportError(fmt::format("{} ({})", result->interrupted, saved(*result)));
        }
        return result;
      });
  if (run.result) publish(*run.result, run.timer, run.context);
}

}  // namespace commgauge::cli
