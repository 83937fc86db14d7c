#pragma once
// The whole command line: every subcommand with its options and value checks. main parses it
// and runs the action; tests parse it in-process.

#include <memory>

#include <CLI/CLI.hpp>

#include "cli/options.hpp"

namespace commgauge::cli {

/// The application with every subcommand registered; a parsed subcommand sets `action`.
std::unique_ptr<CLI::App> make_command_line(Action& action);

}  // namespace commgauge::cli
