#pragma once
// Checks every command-line value passes before any work starts (exit 2 with the flag's name).

#include <CLI/CLI.hpp>

namespace commgauge::cli {

/// A number > 0 (finite); the message names the rule, not the double range.
extern const CLI::Validator kPositive;
/// A number >= 0 (finite).
extern const CLI::Validator kNonNegative;

/// The longest time limit a flag takes (about 11.6 days): a timeout's deadline is a clock value
/// plus the limit, which overflowed for 9.3e9 s (a TCP connect gave up at once, exit 3) and
/// turned 1e308 s into a negative wait.
inline constexpr double kMaxTimeLimit_s = 1e6;
/// The shortest: the waits count milliseconds (1e-300 s was a limit of 0 ms).
inline constexpr double kMinTimeLimit_s = 1e-3;
/// A time limit in seconds, in [kMinTimeLimit_s, kMaxTimeLimit_s].
extern const CLI::Validator kTimeLimit;
/// The same, or below 0 for no limit (serve --accept-timeout).
extern const CLI::Validator kTimeLimitOrForever;

/// A file a command writes its result to, or "-" for standard output: in a directory that exists
/// and is writable, not a directory itself (check_every_value adds it to --json and the like).
extern const CLI::Validator kResultFile;

/// A finite number in [lo, hi]; the message names the range as written (%g).
CLI::Validator within(double lo, double hi);

/// Adds to every option of every subcommand of `app`: numeric values must be finite (CLI11 reads
/// "nan", "inf" and 1e999 as doubles, which no command can use), and no value may be empty (an
/// empty --json or --sizes would otherwise mean "not given"). The result files (--json, --csv,
/// --tables-csv, --timeline, --plot: .png or .svg) must be writable paths in a directory that
/// exists, checked before any measuring.
void check_every_value(CLI::App& app);

}  // namespace commgauge::cli
