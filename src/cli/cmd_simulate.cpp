// commgauge simulate: replay a trace under a network model and predict the run time.

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "cli/checks.hpp"
#include "cli/options.hpp"
#include "cli/trace_boundary.hpp"
#include "common/error.hpp"
#include "common/text_file.hpp"
#include "model/models.hpp"
#include "profile/json_file.hpp"
#include "profile/profile.hpp"
#include "report/progress_bar.hpp"
#include "report/simulation_report.hpp"
#include "report/timeline.hpp"
#include "report/timeline_plot.hpp"
#include "sim/simulator.hpp"

namespace commgauge::cli {

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

std::map<collectives::Operation, collectives::Algorithm> parse_coll(const std::string& text) {
  std::map<collectives::Operation, collectives::Algorithm> out;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw InputError("--coll", fmt::format("\"{}\": expected OPERATION=ALGORITHM", item));
    const auto op = collectives::parse_operation(item.substr(0, eq));
    if (!op)
      throw InputError("--coll", fmt::format("unknown operation \"{}\"", item.substr(0, eq)));
    const auto alg = collectives::parse_algorithm(item.substr(eq + 1));
    const auto known = collectives::algorithms_for(*op);
    if (!alg || std::find(known.begin(), known.end(), *alg) == known.end()) {
      std::string names;
      for (auto a : known)
        names += (names.empty() ? "" : ", ") + std::string(collectives::to_string(a));
      throw InputError("--coll", fmt::format("{}: no algorithm \"{}\" (implemented: {})",
                                             item.substr(0, eq), item.substr(eq + 1), names));
    }
    out[*op] = *alg;
  }
  return out;
}

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

void add_simulate_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "simulate",
      "Predict an MPI program's run time by replaying its trace (commgauge trace, or commgauge "
      "synth) in a discrete-event simulator under a network model: on the traced machine, or on "
      "another network described by a profile, a cluster file and a placement. The trace fixes "
      "the rank count, message sizes and control flow; the network, placement, collective "
      "algorithms and computation speed can change. Prints predicted against measured time, "
      "where each rank's time went, per MPI function and per collective.");
  struct Flags {
    std::string trace;
    std::string profile;
    std::string parameters = "calibrated";
    std::string model = "loggps";
    std::string cluster;
    std::string placement = "recorded";
    std::string compute = "recorded";
    double compute_scale = 1.0;
    std::string coll;
    std::string contention = "none";
    std::string gige_params;
    std::uint64_t set_limit = 1'000'000;
    bool compare = false;
    std::string json, tables_csv;
    std::string timeline;
    std::string timeline_plot, timeline_window;
    std::string plot;
    bool critical_path = false;
    bool denoise = false;
    std::string noise;
    bool no_check = false;
  };
  auto f = std::make_shared<Flags>();
  cmd->add_option("trace", f->trace, "trace directory or container file")->required();
  add_no_check_flag(*cmd, f->no_check);
  cmd->add_option("--profile", f->profile,
                  "machine profile (commgauge profile) or a single link-parameter file "
                  "(commgauge loggp --json); needed unless --model none");
  cmd->add_option("--parameters", f->parameters,
                  "which of the profile's parameter sets: calibrated (fitted to all of loggp's "
                  "curves) or seeds (the seeds' estimators)")
      ->capture_default_str();
  cmd->add_option("--model", f->model,
                  "none (communication is free: the baseline), " + model::model_names(", ") +
                      ", or all (each side by side)")
      ->capture_default_str();
  cmd->add_option("--cluster", f->cluster,
                  "cluster file (JSON: nodes, cores_per_node, link_classes {same_node, "
                  "different_nodes}); default: the trace's hosts");
  cmd->add_option("--placement", f->placement,
                  "recorded (the trace's), rrn (round robin over nodes), rrp (fill each node), "
                  "random:SEED, or a file with one node number per rank")
      ->capture_default_str();
  cmd->add_option("--compute", f->compute,
                  "recorded (gaps between calls, less local calls and the tracer's overhead) or "
                  "cpu (thread CPU time, for oversubscribed traces recorded with --cpu-time)")
      ->check(CLI::IsMember({"recorded", "cpu"}))
      ->capture_default_str();
  cmd->add_option("--compute-scale", f->compute_scale,
                  "multiply computation by this (2 = a processor half as fast)")
      ->check(kPositive)
      ->capture_default_str();
  cmd->add_option("--coll", f->coll,
                  "collective algorithms, e.g. allreduce=ring,bcast=binomial (default: what Open "
                  "MPI 4.1's tuned fixed rules choose, per call)");
  cmd->add_option("--contention", f->contention,
                  "bandwidth sharing of each node's outgoing and incoming network link by the "
                  "inter-node transfers of its ranks (seed 003): none, fair (max-min), gige "
                  "(Definition 1), myrinet (state-set enumeration); only the (k-1)G term is "
                  "shared, rates are recomputed whenever the set of transfers changes")
      ->check(CLI::IsMember({"none", "fair", "gige", "myrinet"}))
      ->capture_default_str();
  cmd->add_option("--gige-params", f->gige_params,
                  "--contention gige: {\"beta\", \"gamma_o\", \"gamma_i\"} (commgauge share-fit "
                  "--json; default: seed 003's)");
  cmd->add_option("--state-set-limit", f->set_limit,
                  "--contention myrinet: the most state sets enumerated per connected component "
                  "of concurrent transfers; past it the replay stops with an error; 1 to 1e7")
      ->check(within(1, 1e7))
      ->capture_default_str();
  cmd->add_flag("--compare", f->compare,
                "per rank, measured (the trace) against predicted: total and time inside MPI, "
                "E_rel and E_abs");
  cmd->add_option("--json", f->json, "write every figure as JSON to this file");
  add_tables_csv_option(*cmd, f->tables_csv, "Options");
  cmd->add_flag("--critical-path", f->critical_path,
                "carry a fixed-size critical-path summary with every message and print the "
                "slowest rank's: computation, MPI and network time on it, per rank and function, "
                "and its last steps (costs memory per operation in flight)");
  cmd->add_flag("--denoise", f->denoise,
                "replay every computation as the least the rank recorded at the same site (the "
                "pair of calls around it): the traced machine's noise out (reads the trace twice)");
  cmd->add_option("--noise", f->noise,
                  "exponential:MEAN_US[:SEED]: add operating-system noise to every computation "
                  "that is not empty (after --denoise and --compute-scale), drawn from an "
                  "exponential distribution of that mean; deterministic for a seed (default 1)");
  cmd->add_option("--timeline", f->timeline,
                  "write the measured and the predicted run (every call and computation of "
                  "every rank) to this file in Chrome's trace-event JSON format (opens in "
                  "Perfetto, ui.perfetto.dev)");
  cmd->add_option("--timeline-plot", f->timeline_plot,
                  fmt::format("draw the measured and the predicted run (a row per rank and run, "
                              "each MPI call a bar coloured by function, the replay's messages "
                              "as arrows; .png or .svg); without --timeline-window each row's "
                              "first {} calls",
                              report::TimelinePlot::kBarsPerRow));
  cmd->add_option("--timeline-window", f->timeline_window,
                  "START:END: the part --timeline-plot draws, in microseconds from the end of "
                  "MPI_Init");
  cmd->add_option("--plot", f->plot,
                  "draw, per rank, the measured time and each model's prediction: the window "
                  "and the time inside MPI (.png or .svg)");
  cmd->callback([&action, f] {
    action = [f](int&, char**&) {
      std::vector<std::string> models;
      if (f->model == "all") {
        models = sim::simulation_model_names();
      } else {
        const auto names = sim::simulation_model_names();
        if (std::find(names.begin(), names.end(), f->model) == names.end())
          throw InputError("--model", fmt::format("unknown model \"{}\" (none, {}, all)", f->model,
                                                  model::model_names(", ")));
        models = {f->model};
      }
      const bool needs_profile =
          std::any_of(models.begin(), models.end(), [](const auto& m) { return m != "none"; });
      if (needs_profile && f->profile.empty())
        throw InputError("--profile", "a profile is needed for model " + f->model);
      std::optional<report::TimelineWindow> window;
      if (!f->timeline_window.empty()) {
        if (f->timeline_plot.empty())
          throw InputError("--timeline-window", "chooses what --timeline-plot draws; give that");
        window = report::parse_timeline_window(f->timeline_window);
      }
      sim::Options options;
      options.compute =
          f->compute == "cpu" ? sim::ComputeSource::cpu : sim::ComputeSource::recorded;
      options.compute_scale = f->compute_scale;
      options.algorithms = parse_coll(f->coll);
      options.contention = f->contention;
      options.critical_path = f->critical_path;
      options.denoise = f->denoise;
      options.traced_machine = f->cluster.empty() && f->placement == "recorded";
      if (!f->noise.empty()) options.noise = sim::parse_noise(f->noise);
      options.gige = read_gige_params(f->gige_params);
      options.myrinet_set_limit = f->set_limit;
      report::TerminalProgress progress;  // drawn only on a terminal

      const trace::TraceReader trace = open_trace(f->trace);
      if (!trace_passes_check(trace, f->no_check)) return 1;
      // The tracer counts each rank's events in the index; the replay's share of them is its
      // progress (synthetic and converted traces have no counts: records alone).
      std::uint64_t traced_events = 0;
      if (const auto info = trace.index().find("rank_info");
          info != trace.index().end() && info->is_array() && info->size() == trace.ranks()) {
        for (const auto& r : *info) {
          if (!r.is_object() || !r.contains("events") || !r["events"].is_number_unsigned()) {
            traced_events = 0;
            break;
          }
          traced_events += r["events"].get<std::uint64_t>();
        }
      }
      const auto recorded = sim::recorded_placement(trace.index(), trace.ranks());
      const sim::Cluster cluster =
          f->cluster.empty()
              ? sim::cluster_of_placement(recorded)
              : sim::cluster_from_json(profile::read_json_file(f->cluster), f->cluster);
      const auto nodes = sim::place_ranks(f->placement, trace.ranks(), cluster, recorded);
      const nlohmann::json profile_doc =
          needs_profile ? profile::read_json_file(f->profile) : nlohmann::json();
      const auto links =
          needs_profile ? profile::links_of_document(
                              profile_doc, f->profile,
                              {cluster.same_node_class, cluster.different_nodes_class},
                              profile::parameter_set_from_string(f->parameters, "--parameters"))
                        : std::map<std::string, model::LinkParams>{};
      const auto largest_measured = needs_profile
                                        ? profile::measured_max_bytes(profile_doc, f->profile)
                                        : std::map<std::string, std::uint64_t>{};
      if (needs_profile) {
        for (const auto& [name, reasons] : profile::untrusted_classes(profile_doc, f->profile)) {
          if (name == cluster.same_node_class || name == cluster.different_nodes_class)
            warn_untrusted(f->profile, name, reasons);
        }
      }
      std::printf("commgauge simulate: %s: %u ranks on %u nodes (placement %s, cluster %s)%s\n",
                  f->trace.c_str(), trace.ranks(), cluster.nodes, f->placement.c_str(),
                  cluster.origin.c_str(),
                  trace.index().value("complete", true) ? "" : "; the trace is INCOMPLETE");
      std::optional<report::TimelineWriter> timeline;
      if (!f->timeline.empty()) {  // not "-": checked with the command line (cli/checks)
        timeline.emplace(f->timeline);
        timeline->process(0, "measured (trace)");
      }
      std::optional<report::TimelinePlot> timeline_plot;
      if (!f->timeline_plot.empty()) {
        timeline_plot.emplace(window);
        timeline_plot->process(0, "measured");
      }
      std::vector<sim::Result> results;
      report::TableSink tables;
      for (const auto& m : models) {
        std::optional<sim::Network> net;
        try {
          net.emplace(m, links, cluster, nodes);
          if (needs_profile) net->set_measured_max_bytes(largest_measured);
        } catch (const InputError& error) {
          if (models.size() == 1) throw InputError("--profile " + f->profile, error.what());
          // --model all: a model the profile cannot serve is skipped, with the reason.
          std::printf("model %s: not applicable: %s\n\n", m.c_str(), error.what());
          continue;
        }
        if (timeline || timeline_plot) {
          // The measured run once (with the first model), then each model's prediction.
          const int pid = static_cast<int>(results.size()) + 1;
          if (timeline) timeline->process(pid, "predicted (" + m + ")");
          if (timeline_plot) timeline_plot->process(pid, m);
          options.timeline = [&timeline, &timeline_plot, pid](const sim::TimelineSpan& span) {
            if (!span.predicted && pid != 1) return;
            const int run = span.predicted ? pid : 0;
            if (timeline) timeline->span(run, span);
            if (timeline_plot) timeline_plot->span(run, span);
          };
          options.timeline_message = [&timeline, &timeline_plot,
                                      pid](const sim::TimelineMessage& message) {
            if (timeline) timeline->message(pid, message);
            if (timeline_plot) timeline_plot->message(pid, message);
          };
        }
        options.progress = [&progress, &m, traced_events](std::uint64_t records) {
          if (traced_events > 0) {
            progress.update("replay " + m,
                            static_cast<double>(records) / static_cast<double>(traced_events));
          } else {
            progress.update(fmt::format("replay {}: {} records", m, records), -1);
          }
        };
        const double cpu0 = cpu_seconds();
        const auto wall0 = std::chrono::steady_clock::now();
        sim::Result r = sim::simulate(trace, *net, options);
        if (r.beyond_measured.messages > 0)
          r.notes.push_back(fmt::format(
              "{} of {} messages are larger than the largest size their link class was "
              "measured at (the largest: {} B): their cost is the last range's, extrapolated; "
              "profile --max-size {} measures up to it",
              r.beyond_measured.messages, r.messages, r.beyond_measured.largest_bytes,
              r.beyond_measured.largest_bytes));
        const double cpu = cpu_seconds() - cpu0;
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        progress.done();
        std::printf("%s", report::simulation_text(r, f->compare, &tables).c_str());
        std::printf(
            "  replay: %llu records, %llu engine events, %llu messages in %.3f s CPU "
            "(%.3g records per CPU-second), %.3f s wall, peak memory %.1f MiB\n\n",
            static_cast<unsigned long long>(r.records),
            static_cast<unsigned long long>(r.events_processed),
            static_cast<unsigned long long>(r.messages), cpu,
            cpu > 0 ? static_cast<double>(r.records) / cpu : 0.0, wall,
            static_cast<double>(peak_rss_kib()) / 1024.0);
        // The replay's own CPU time stays out of the JSON: the same input gives the same file.
        results.push_back(std::move(r));
      }
      if (results.size() > 1)
        std::printf("%s", report::models_side_by_side(results, &tables).c_str());
      if (!f->tables_csv.empty()) write_text_file(f->tables_csv, tables.csv());
      if (!f->plot.empty())
        report::plot_simulation(f->plot, results,
                                fmt::format("{}: measured and predicted, {} ranks",
                                            std::filesystem::path(f->trace).filename().string(),
                                            results.front().ranks));
      if (timeline) {
        timeline->finish();
        std::printf("timeline: %s (Chrome trace-event JSON; open in ui.perfetto.dev)\n",
                    f->timeline.c_str());
      }
      if (!f->json.empty()) {
        nlohmann::json doc;
        if (results.size() == 1) {
          doc = report::simulation_to_json(results[0]);
        } else {
          doc = report::simulation_to_json(results.back());
          doc["models"] = nlohmann::json::array();
          for (const auto& r : results)
            doc["models"].push_back(report::simulation_to_json(r));
        }
        doc["trace"] = f->trace;
        doc["placement"] = f->placement;
        profile::write_json_file(f->json, doc);
      }
      // Last: a window that holds no call is refused after every other result is written.
      if (timeline_plot) {
        timeline_plot->write(f->timeline_plot,
                             fmt::format("{}: measured and predicted, {} ranks",
                                         std::filesystem::path(f->trace).filename().string(),
                                         results.front().ranks));
        std::printf("timeline plot: %s\n", f->timeline_plot.c_str());
      }
      return 0;
    };
  });
}

}  // namespace commgauge::cli
