#pragma once
// How a command that ended with an exception is reported: one line and the exit status of the
// README's table (0 ok, 1 runtime failure, 2 input, 3 transport or timeout, 4 deadlock). main
// prints it; under mpirun a failing rank prints it and aborts the job with the same status.

#include <exception>
#include <string>

#include <CLI/CLI.hpp>

namespace commgauge::cli {

struct Failure {
  std::string text;  ///< "error: --max-bytes: ...", "transport error: ...", ...
  int status = 1;
};

/// `app`: the parsed command line (null: none), against which an input error that names an
/// option by its field (min_rounds) is shown as the chosen subcommand's flag (--min-rounds).
Failure describe_failure(const CLI::App* app, const std::exception_ptr& error);

/// Where a field of the options below the CLI has another name than `command`'s flag (timer's
/// --trials is TimerOptions' timer_trials): an error naming the field names `flag`.
void name_field(const CLI::App& command, const std::string& field, const std::string& flag);

/// The command line this process parsed (main sets it): failures found deep in a run are
/// described against it.
void set_parsed_command_line(const CLI::App* app);
const CLI::App* parsed_command_line();

}  // namespace commgauge::cli
