#include "cli/checks.hpp"

#include <cmath>
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
    for (CLI::Option* option : sub->get_options()) {
      if (option->get_type_size() == 0) continue;  // a flag without a value
      // The program's own arguments (trace -- PROGRAM ARGS...) may be anything, "" included.
      if (!option->nonpositional() && option->get_items_expected_max() > 1) continue;
      if (numeric(*option)) {
        option->check(CLI::Validator(finite, ""));
      } else {
        option->check(CLI::Validator(not_empty, ""));
      }
    }
  }
}

}  // namespace commgauge::cli
