#pragma once
// Command-line options shared by several subcommands.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "measure/loggp.hpp"
#include "model/sharing.hpp"
#include "net/launch.hpp"

namespace commgauge::cli {

/// Raw values of the transport options, turned into net::TransportOptions after parsing.
struct TransportFlags {
  std::string transport = "mpi";
  int source = 0;
  int dest = 1;
  std::string clock = "steady";
  std::string peer;
  double connect_timeout_s = 5;
  double io_timeout_s = 10;
  double mpi_timeout_s = 60;
  std::string mpi_thread_level = "single";
  std::string virtual_net;

  net::TransportOptions resolve() const;  ///< throws InputError
};

void add_transport_options(CLI::App& app, TransportFlags& flags);

/// `--tables-csv FILE`: every table the command prints, as one CSV (report::TableSink).
void add_tables_csv_option(CLI::App& app, std::string& file, const std::string& group);

/// loggp's budgets for a whole run (LoggpOptions::max_messages, and max_bytes as text in
/// `max_bytes`, its default written from the options' own), the same flags on loggp and profile;
/// `whose` names the run they bound.
void add_loggp_budget_options(CLI::App& app, measure::LoggpOptions& loggp, std::string& max_bytes,
                              const std::string& whose, const std::string& group);
/// `--bill-by-pages` (loggp and profile): what it does, in one place.
inline constexpr const char* kBillByPagesHelp =
    "let the calibrated set bill a range's per-byte costs by whole pages of the buffers' 4 KiB "
    "where its curves show a staircase (over vader's single copy a transfer costs per page it "
    "maps): exact for buffers that start on a page, as the measurement's do; a program's buffers "
    "and Open MPI's collectives' own start anywhere";

/// Once `loggp` holds the run's sweep: the budgets the user gave (max_bytes parsed), and each
/// one not given scaled from `reference` (the command's default run) to the sweep
/// (measure::scale_budgets_to_sweep).
void apply_loggp_budget(const CLI::App& app, measure::LoggpOptions& loggp,
                        const std::string& max_bytes, const measure::LoggpOptions& reference);

/// A subcommand's work, run after parsing; returns the exit status.
using Action = std::function<int(int& argc, char**& argv)>;

/// Writes `text` (whole lines) to standard error after flushing standard output: a reader of
/// both (`2>&1`, a log) sees a warning where it arose, not before every line still buffered.
void warn(const std::string& text);

/// Prints to standard error that `link_class` of `profile_file` is not trusted, with the
/// reasons; nothing when `reasons` is empty (the class is trusted or says nothing).
void warn_untrusted(const std::string& profile_file, const std::string& link_class,
                    const std::vector<std::string>& reasons);

/// GigE sharing parameters from a `share-fit --json` file {"beta", "gamma_o", "gamma_i"};
/// seed 003's defaults when `path` is empty.
model::GigeParams read_gige_params(const std::string& path);
/// The ranges every GigE parameter set must hold (beta in (0, 1e6], gammas in [0, 1]); InputError
/// naming `where` and the field otherwise.
void check_gige_params(const model::GigeParams& p, const std::string& where);

void add_timer_command(CLI::App& app, Action& action);
void add_latency_command(CLI::App& app, Action& action);
void add_serve_command(CLI::App& app, Action& action);
void add_loggp_command(CLI::App& app, Action& action);
void add_overlap_command(CLI::App& app, Action& action);
void add_profile_command(CLI::App& app, Action& action);
void add_predict_command(CLI::App& app, Action& action);
void add_models_command(CLI::App& app, Action& action);
void add_share_command(CLI::App& app, Action& action);
void add_share_fit_command(CLI::App& app, Action& action);
void add_share_task_command(CLI::App& app, Action& action);
void add_trace_command(CLI::App& app, Action& action);
void add_trace_summary_command(CLI::App& app, Action& action);
void add_trace_dump_command(CLI::App& app, Action& action);
void add_trace_check_command(CLI::App& app, Action& action);
void add_trace_export_command(CLI::App& app, Action& action);
void add_simulate_command(CLI::App& app, Action& action);
void add_synth_command(CLI::App& app, Action& action);
/// `completion bash`: needs the whole `app` (every other command added) when it runs.
void add_completion_command(CLI::App& app, Action& action);

}  // namespace commgauge::cli
