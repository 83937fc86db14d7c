// commgauge: what does communication cost here, and how long will this MPI program take there?

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/command_line.hpp"
#include "cli/failure.hpp"
#include "cli/options.hpp"
#include "common/temporaries.hpp"
#include "common/text_file.hpp"
#include "report/context.hpp"

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
int report_error(const commgauge::cli::Failure& failure) {
  if (!primary_process() && failure.status == 2)
    std::this_thread::sleep_for(std::chrono::seconds(30));
  commgauge::cli::warn(fmt::format("commgauge: {}\n", failure.text));
  return failure.status;
}

}  // namespace

int main(int argc, char** argv) {
  commgauge::report::set_command_line(argc, argv);
  commgauge::remove_temporaries_on_signals();
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
    // CLI11 reads an unknown first word as a missing subcommand ("A subcommand is required").
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      known = known || (argc > 1 && sub->get_name() == argv[1]);
    if (argc > 1 && argv[1][0] != '-' && !known) {
      if (primary_process())
        std::fprintf(stderr,
                     "commgauge: error: unknown command \"%s\" (commgauge --help lists them)\n",
                     argv[1]);
      return 2;
    }
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
  commgauge::cli::set_parsed_command_line(&app);
  try {
    return action(argc, argv);
  } catch (...) {
    return report_error(commgauge::cli::describe_failure(&app, std::current_exception()));
  }
}
