#pragma once
// Checks every command-line value passes before any work starts (exit 2 with the flag's name).

#include <CLI/CLI.hpp>

namespace commgauge::cli {

/// A number > 0 (finite); the message names the rule, not the double range.
extern const CLI::Validator kPositive;
/// A number >= 0 (finite).
extern const CLI::Validator kNonNegative;

/// Adds to every option of every subcommand of `app`: numeric values must be finite (CLI11 reads
/// "nan", "inf" and 1e999 as doubles, which no command can use), and no value may be empty (an
/// empty --json or --sizes would otherwise mean "not given").
void check_every_value(CLI::App& app);

}  // namespace commgauge::cli
