#include "cli/failure.hpp"

#include <algorithm>
#include <new>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "sim/simulator.hpp"

namespace commgauge::cli {

namespace {

const CLI::App* parsed_app = nullptr;

// An error below the CLI names an option by its name in the options (min_rounds, placement
// recorded); shown as the flag of the command that ran (--min-rounds) where it has one.
InputError as_flag(const CLI::App* app, const InputError& e) {
  const std::string& where = e.where();
  if (app == nullptr || where.empty() || where.front() == '-') return e;
  const std::size_t space = where.find(' ');
  std::string flag = "--" + where.substr(0, space);
  std::replace(flag.begin(), flag.end(), '_', '-');
  for (const CLI::App* sub : app->get_subcommands()) {
    if (sub->get_option_no_throw(flag) != nullptr)
      return {flag + (space == std::string::npos ? "" : where.substr(space)), e.detail()};
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

void set_parsed_command_line(const CLI::App* app) {
  parsed_app = app;
}

const CLI::App* parsed_command_line() {
  return parsed_app;
}

}  // namespace commgauge::cli
