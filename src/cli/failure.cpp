#include "cli/failure.hpp"

#include <algorithm>
#include <map>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "sim/simulator.hpp"

namespace commgauge::cli {

namespace {

const CLI::App* parsed_app = nullptr;

std::map<std::pair<const CLI::App*, std::string>, std::string>& field_flags() {
  static std::map<std::pair<const CLI::App*, std::string>, std::string> names;
  return names;
}

// The flag of `command` for the field `field`: one named for it, else --field (min_rounds:
// --min-rounds) when `command` has that option; empty if neither.
std::string flag_of(const CLI::App* command, const std::string& field) {
  const auto named = field_flags().find({command, field});
  if (named != field_flags().end()) return named->second;
  std::string flag = "--" + field;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return command->get_option_no_throw(flag) != nullptr ? flag : std::string();
}

// An error below the CLI names an option by its name in the options (min_rounds, placement
// recorded); shown as the flag of the command that ran (--min-rounds) where it has one. Nested
// subcommands (predict pingpong) are looked through.
InputError as_flag(const CLI::App* app, const InputError& e) {
  const std::string& where = e.where();
  if (app == nullptr || where.empty() || where.front() == '-') return e;
  const std::size_t space = where.find(' ');
  const std::string field = where.substr(0, space);
  std::vector<const CLI::App*> chosen;
  for (const CLI::App* sub : app->get_subcommands())
    chosen.push_back(sub);
  while (!chosen.empty()) {
    const CLI::App* sub = chosen.back();
    chosen.pop_back();
    const std::string flag = flag_of(sub, field);
    if (!flag.empty())
      return {flag + (space == std::string::npos ? "" : where.substr(space)), e.detail()};
    for (const CLI::App* inner : sub->get_subcommands())
      chosen.push_back(inner);
  }
  return e;
}

Failure failure(const char* kind, const std::exception& e, int status) {
  return {std::string(kind) + e.what(), status};
}

}  // namespace

Failure describe_failure(const CLI::App* app, const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const InputError& e) {
    return failure("error: ", as_flag(app, e), 2);
  } catch (const TransportError& e) {
    return failure("transport error: ", e, 3);
  } catch (const sim::DeadlockError& e) {
    return failure("deadlock: ", e, 4);
  } catch (const nlohmann::json::exception& e) {
    // A document's field of the wrong type that a reader did not name (the readers check
    // their fields; this is the last guard): bad input.
    return failure("error in a JSON document: ", e, 2);
  } catch (const std::bad_alloc& e) {
    return failure("out of memory: ", e, 1);
  } catch (const std::length_error& e) {
    return failure("a size beyond what this machine can hold: ", e, 1);
  } catch (const std::exception& e) {
    return failure("error: ", e, 1);
  } catch (...) {
    return {"error: an unknown exception", 1};
  }
}

void name_field(const CLI::App& command, const std::string& field, const std::string& flag) {
  field_flags()[{&command, field}] = flag;
}

void set_parsed_command_line(const CLI::App* app) {
  parsed_app = app;
}

const CLI::App* parsed_command_line() {
  return parsed_app;
}

}  // namespace commgauge::cli
