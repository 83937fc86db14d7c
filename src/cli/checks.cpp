#include "cli/checks.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <unistd.h>

namespace commgauge::cli {

namespace {

// The number a numeric option's value reads as, as strtod reads it (CLI11 accepts what it does).
bool read_number(const std::string& value, double& out) {
  if (value.empty()) return false;
  char* end = nullptr;
  out = std::strtod(value.c_str(), &end);  // 1e999 reads as inf: reported as not finite
  return end != value.c_str();
}

std::string finite(const std::string& value) {
  double v = 0;
  if (read_number(value, v) && !std::isfinite(v))
    return "must be a finite number, got \"" + value + "\"";
  return {};
}

std::string not_empty(const std::string& value) {
  return value.empty() ? std::string("must not be empty") : std::string();
}

// An unsigned option's value: CLI11 reads "-1" into it as 2^64 - 1 (a count that never ends) and
// a number above 2^64 - 1 as the largest; both are refused here.
std::string unsigned_value(const std::string& value) {
  const std::size_t first = value.find_first_not_of(" \t");
  if (first != std::string::npos && value[first] == '-')
    return "must be a whole number >= 0, got \"" + value + "\"";
  if (value.find_first_not_of("0123456789", first) == std::string::npos &&
      first != std::string::npos) {
    errno = 0;
    (void)std::strtoull(value.c_str() + first, nullptr, 10);
    if (errno == ERANGE)
      return "is out of range (at most 18446744073709551615), got \"" + value + "\"";
  }
  return {};
}

// A file a command writes its result to (--json, --csv, --plot, ...): checked when the command
// line is read, so that a typo in a directory does not end an hour of measuring. "-" is standard
// output where the option takes it (main keeps that stream for the result).
std::string output_file(const std::string& value, bool stdout_allowed) {
  namespace fs = std::filesystem;
  if (value == "-")
    return stdout_allowed ? std::string()
                          : std::string("standard output is not supported; give a file name");
  std::error_code ec;
  const fs::path path(value);
  if (fs::is_directory(path, ec)) return "\"" + value + "\" is a directory; give a file name";
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::exists(parent, ec)) return "the directory \"" + parent.string() + "\" does not exist";
  if (!fs::is_directory(parent, ec)) return "\"" + parent.string() + "\" is not a directory";
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    return "cannot write in \"" + parent.string() + "\": " + std::strerror(errno);
  return {};
}

std::string plot_file(const std::string& value) {
  const std::string ext = std::filesystem::path(value).extension().string();
  if (ext != ".png" && ext != ".svg") return "expected a .png or .svg file, got \"" + value + "\"";
  return output_file(value, false);
}

bool unsigned_type(const CLI::Option& option) {
  return option.get_type_name().rfind("UINT", 0) == 0;
}

bool numeric(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  for (const char* prefix : {"FLOAT", "INT", "UINT", "NUMBER"}) {
    if (type.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace

const CLI::Validator kResultFile([](const std::string& v) { return output_file(v, true); }, "");

const CLI::Validator kPositive(
    [](std::string& value) {
      double v = 0;
      if (!read_number(value, v) || !(v > 0) || !std::isfinite(v))
        return "must be a finite number > 0, got \"" + value + "\"";
      return std::string();
    },
    "> 0");

CLI::Validator within(double lo, double hi) {
  char range[64];
  std::snprintf(range, sizeof range, "%g to %g", lo, hi);
  const std::string text = range;
  return CLI::Validator(
      [lo, hi, text](std::string& value) {
        double v = 0;
        if (!read_number(value, v) || !(v >= lo && v <= hi))
          return "must be a finite number from " + text + ", got \"" + value + "\"";
        return std::string();
      },
      text);
}

const CLI::Validator kTimeLimit(
    [](std::string& value) {
      double v = 0;
      // Below a millisecond a limit rounds to none (the waits count milliseconds).
      if (!read_number(value, v) || !(v >= kMinTimeLimit_s) || !(v <= kMaxTimeLimit_s))
        return "must be a finite number of seconds from 0.001 to 1e6, got \"" + value + "\"";
      return std::string();
    },
    "[0.001, 1e6] s");

const CLI::Validator kTimeLimitOrForever(
    [](std::string& value) {
      double v = 0;
      if (!read_number(value, v) || (v >= 0 && v < kMinTimeLimit_s) || !(v <= kMaxTimeLimit_s))
        return "must be a finite number of seconds from 0.001 to 1e6 (or below 0: forever), "
               "got "
               "\"" +
               value + "\"";
      return std::string();
    },
    "[0.001, 1e6] s or < 0");

const CLI::Validator kNonNegative(
    [](std::string& value) {
      double v = 0;
      if (!read_number(value, v) || !(v >= 0) || !std::isfinite(v))
        return "must be a finite number >= 0, got \"" + value + "\"";
      return std::string();
    },
    ">= 0");

void check_every_value(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    check_every_value(*sub);  // nested scenarios too (predict pingpong, isend-compute-wait)
    for (CLI::Option* option : sub->get_options()) {
      if (option->get_type_size() == 0) continue;  // a flag without a value
      // The program's own arguments (trace -- PROGRAM ARGS...) may be anything, "" included.
      if (!option->nonpositional() && option->get_items_expected_max() > 1) continue;
      if (numeric(*option)) {
        option->check(CLI::Validator(not_empty, ""));
        option->check(CLI::Validator(finite, ""));
        if (unsigned_type(*option)) option->check(CLI::Validator(unsigned_value, ""));
      } else {
        option->check(CLI::Validator(not_empty, ""));
      }
      const std::string& name = option->get_name();
      if (name == "--plot" || name == "--timeline-plot") {
        option->check(CLI::Validator(plot_file, ""));
      } else if (name == "--timeline") {
        option->check(
            CLI::Validator([](const std::string& v) { return output_file(v, false); }, ""));
      } else if (name == "--json" || name == "--csv" || name == "--tables-csv") {
        option->check(kResultFile);
      }
    }
  }
}

}  // namespace commgauge::cli
