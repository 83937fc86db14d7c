#include "cli/checks.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

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
      if (!read_number(value, v) || !(v > 0) || !(v <= kMaxTimeLimit_s))
        return "must be a finite number of seconds above 0 and at most 1e6, got \"" + value + "\"";
      return std::string();
    },
    "(0, 1e6] s");

const CLI::Validator kTimeLimitOrForever(
    [](std::string& value) {
      double v = 0;
      if (!read_number(value, v) || v == 0 || !(v <= kMaxTimeLimit_s))
        return "must be a finite number of seconds above 0 and at most 1e6 (or below 0: forever), "
               "got "
               "\"" +
               value + "\"";
      return std::string();
    },
    "(0, 1e6] s or < 0");

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
    }
  }
}

}  // namespace commgauge::cli
