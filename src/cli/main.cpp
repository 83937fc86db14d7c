// commgauge: what does communication cost here, and how long will this MPI program take there?

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/command_line.hpp"
#include "common/error.hpp"
#include "common/text_file.hpp"
#include "net/launch.hpp"
#include "profile/json_file.hpp"
#include "report/context.hpp"
#include "sim/simulator.hpp"

namespace {

// Under mpirun every rank parses the same command line; only one reports an input error.
bool primary_process() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* v = std::getenv(var)) return std::string(v) == "0";
  }
  return true;
}

// An input error is found alike on every rank; only the primary prints it. The others do not
// exit first - mpirun kills the remaining ranks as soon as one exits non-zero, which could take
// the primary down before its line is out - but wait for the launcher to end the job once the
// primary has exited; if that has not happened within 30 s, the error may be one only this rank
// saw, and it prints it itself.
int report_error(const char* kind, const std::exception& e, int status) {
  if (!primary_process() && status == 2) std::this_thread::sleep_for(std::chrono::seconds(30));
  std::fprintf(stderr, "commgauge: %s%s\n", kind, e.what());
  return status;
}

// An error below the CLI names an option by its name in the options (min_rounds, placement
// recorded); shown as the flag of the command that ran (--min-rounds) where it has one.
commgauge::InputError as_flag(const CLI::App& app, const commgauge::InputError& e) {
  const std::string& where = e.where();
  if (where.empty() || where.front() == '-') return e;
  const std::size_t space = where.find(' ');
  std::string flag = "--" + where.substr(0, space);
  std::replace(flag.begin(), flag.end(), '_', '-');
  for (const CLI::App* sub : app.get_subcommands()) {
    if (sub->get_option_no_throw(flag) != nullptr)
      return {flag + (space == std::string::npos ? "" : where.substr(space)), e.detail()};
  }
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  commgauge::report::set_command_line(argc, argv);
  commgauge::cli::Action action;
  const std::unique_ptr<CLI::App> command_line = commgauge::cli::make_command_line(action);
  CLI::App& app = *command_line;

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (primary_process()) std::fprintf(stderr, "commgauge: error: %s\n", e.what());
    return 2;
  }
  // A result written to standard output (--json -, --csv -, --tables-csv -) keeps it to itself: the
  // tables and messages that would go there go to standard error, so the result can be piped.
  // Subcommands nest (predict pingpong): every level chosen is looked at.
  bool result_on_stdout = false;
  std::vector<std::string> on_stdout;
  std::vector<const CLI::App*> chosen;
  for (const CLI::App* sub : app.get_subcommands())
    chosen.push_back(sub);
  while (!chosen.empty()) {
    const CLI::App* sub = chosen.back();
    chosen.pop_back();
    for (const CLI::App* inner : sub->get_subcommands())
      chosen.push_back(inner);
    for (const char* name : {"--json", "--csv", "--tables-csv"}) {
      const CLI::Option* option = sub->get_option_no_throw(name);
      if (option != nullptr && option->count() > 0 && option->as<std::string>() == "-") {
        result_on_stdout = true;
        on_stdout.emplace_back(name);
      }
    }
  }
  // Two results on standard output would be one stream of both (JSON and CSV run together).
  if (on_stdout.size() > 1) {
    if (primary_process())
      std::fprintf(stderr,
                   "commgauge: error: %s and %s both write to standard output ('-'); give one of "
                   "them a file\n",
                   on_stdout[0].c_str(), on_stdout[1].c_str());
    return 2;
  }
  if (result_on_stdout) {
    std::fflush(stdout);
    commgauge::set_result_output(::dup(STDOUT_FILENO));
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
  }
  try {
    return action(argc, argv);
  } catch (const commgauge::InputError& e) {
    return report_error("error: ", as_flag(app, e), 2);
  } catch (const commgauge::TransportError& e) {
    return report_error("transport error: ", e, 3);
  } catch (const commgauge::sim::DeadlockError& e) {
    return report_error("deadlock: ", e, 4);
  } catch (const nlohmann::json::exception& e) {
    // A document's field of the wrong type that a reader did not name (the readers check
    // their fields; this is the last guard): bad input.
    return report_error("error in a JSON document: ", e, 2);
  } catch (const std::bad_alloc& e) {
    return report_error("out of memory: ", e, 1);
  } catch (const std::length_error& e) {
    return report_error("a size beyond what this machine can hold: ", e, 1);
  } catch (const std::exception& e) {
    return report_error("error: ", e, 1);
  }
}
