#include <cstdio>

#include <fmt/format.h>

#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/json_text.hpp"
#include "common/text_file.hpp"
#include "common/units.hpp"
#include "model/models.hpp"
#include "profile/json_file.hpp"
#include "profile/profile.hpp"
#include "report/latency_mode_report.hpp"
#include "report/prediction.hpp"

namespace commgauge::cli {

namespace {

struct PredictFlags {
  std::string profile;
  std::string link_class;
  std::string parameters = "calibrated";
  std::vector<std::string> models = {"all"};
  std::string sizes = "1:1MiB:4";
  bool extrapolate = false;
  std::string json, plot, measured, tables_csv;
  double comp_us = 0;
  double receiver_late_us = 0;
};

void add_common(CLI::App& cmd, PredictFlags& f) {
  cmd.add_option("--profile", f.profile,
                 "machine profile (commgauge profile) or link parameters (commgauge loggp --json)")
      ->required();
  cmd.add_option("--link-class", f.link_class, "intra_node or inter_node (default: intra_node)");
  cmd.add_option("--parameters", f.parameters,
                 "calibrated (one set fitted to all of loggp's curves) or seeds (the seeds' "
                 "estimators: seed 000 eqs. (6), (7), §3.4)")
      ->capture_default_str();
  cmd.add_option("--model", f.models,
                 "a model (" + model::model_names(", ") + "), a list (\"loggp,loggps\") or all")
      ->delimiter(',')
      ->capture_default_str();
  cmd.add_option("--sizes", f.sizes,
                 "message sizes \"8,1KiB\" or \"MIN:MAX[:FACTOR]\" (at most 10000)")
      ->capture_default_str();
  cmd.add_flag("--extrapolate", f.extrapolate,
               "also predict sizes outside the range the profile was measured at");
  cmd.add_option("--json", f.json, "write the predictions as JSON");
  add_tables_csv_option(cmd, f.tables_csv, "Options");
}

std::vector<model::CommModel> models_of(const PredictFlags& f, const model::LinkParams& link) {
  std::vector<model::CommModel> out;
  if (f.models != std::vector<std::string>{"all"}) {
    // Named models are the columns a user asked for, so each must apply: a table whose columns
    // depend on what the profile happened to measure cannot be compared run to run.
    for (const auto& name : f.models) {
      try {
        out.push_back(model::make_model(name, link));
      } catch (const InputError& e) {
        throw InputError("--model", e.what());
      }
    }
    return out;
  }
  for (const auto& info : model::model_infos()) {
    try {
      out.push_back(model::make_model(info.name, link));
    } catch (const InputError& e) {
      // With all models, one that cannot model this link is left out, with the reason.
      warn(fmt::format("commgauge: warning: {} left out: {}\n", info.name, e.what()));
    }
  }
  return out;
}

// Keeps sizes within the measured range unless --extrapolate; warns about the others.
std::vector<std::uint64_t> checked_sizes(const PredictFlags& f, const profile::LinkForPrediction& l,
                                         std::vector<bool>& extrapolated) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t k : parse_size_list(f.sizes, "--sizes")) {
    const bool outside =
        l.measured_bytes && (k < l.measured_bytes->first || k > l.measured_bytes->second);
    if (outside && !f.extrapolate) {
      warn(fmt::format(
          "commgauge: warning: {} B is outside the measured sizes {}-{} B: skipped (use "
          "--extrapolate)\n",
          k, l.measured_bytes->first, l.measured_bytes->second));
      continue;
    }
    out.push_back(k);
    extrapolated.push_back(outside);
  }
  if (out.empty()) throw InputError("--sizes", "no size left to predict (see the warnings)");
  return out;
}

nlohmann::json header_of(const PredictFlags& f, const profile::LinkForPrediction& l) {
  return {{"profile", f.profile}, {"link_class", l.link_class}};
}

}  // namespace

void add_predict_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("predict",
                                 "Predict communication times from a profile with the LogGP, "
                                 "LogGPS and LogGPO models (no measurement).");
  cmd->require_subcommand(1);
  auto f = std::make_shared<PredictFlags>();

  auto* pp = cmd->add_subcommand("pingpong",
                                 "Round-trip and one-way time of a blocking ping-pong per size; "
                                 "with --measured, E_rel per size and E_abs per model.");
  add_common(*pp, *f);
  pp->add_option("--measured", f->measured,
                 "measured one-way times: a latency or loggp JSON, or a CSV of size,time");
  pp->add_option("--plot", f->plot, "measured against predicted curves per model (.png or .svg)");
  pp->callback([&action, f] {
    action = [f](int&, char**&) {
      const auto link = profile::read_link_for_prediction(
          f->profile, f->link_class,
          profile::parameter_set_from_string(f->parameters, "--parameters"));
      warn_untrusted(f->profile, link.link_class, link.distrust);
      std::vector<bool> extrapolated;
      const auto sizes = checked_sizes(*f, link, extrapolated);
      std::vector<report::Measured> measured;
      if (!f->measured.empty()) measured = report::read_measured(f->measured);
      std::vector<report::PingPongPrediction> preds;
      for (const auto& m : models_of(*f, link.link)) {
        preds.push_back(report::predict_pingpong(m, sizes, measured, extrapolated,
                                                 link.link.rendezvous_threshold_bytes()));
      }
      report::TableSink tables;
      std::fputs(report::pingpong_table(preds, &tables).c_str(), stdout);
      const auto state = report::measured_against_band(link.latency_mode, measured);
      if (state) std::fputs(report::measured_against_band_line(*state).c_str(), stdout);
      if (!f->tables_csv.empty()) write_text_file(f->tables_csv, tables.csv());
      if (!f->json.empty()) {
        nlohmann::json doc = report::pingpong_json(preds, header_of(*f, link));
        if (state) doc["machine_state"] = report::measured_against_band_json(*state);
        profile::write_json_file(f->json, doc);
      }
      if (!f->plot.empty()) {
        report::plot_pingpong(f->plot, preds, fmt::format("ping-pong: {}", f->profile));
      }
      return 0;
    };
  });

  auto* icw = cmd->add_subcommand(
      "isend-compute-wait",
      "seed 001's overlap scenario: MPI_Isend, --comp-us of computation, MPI_Wait on the sender; "
      "MPI_Irecv at --receiver-late-us, the same computation, MPI_Wait on the receiver. Prints "
      "Os, Or, Osw, Orw, Tc, Rso, Rro per size and model.");
  add_common(*icw, *f);
  icw->add_option("--comp-us", f->comp_us, "computation between the call and its wait")->required();
  icw->add_option("--receiver-late-us", f->receiver_late_us,
                  "when the receiver posts MPI_Irecv, after the sender's MPI_Isend")
      ->capture_default_str();
  icw->callback([&action, f] {
    action = [f](int&, char**&) {
      if (!(f->comp_us >= 0)) throw InputError("--comp-us", "must be >= 0 us");
      if (!(f->receiver_late_us >= 0)) throw InputError("--receiver-late-us", "must be >= 0 us");
      const auto link = profile::read_link_for_prediction(
          f->profile, f->link_class,
          profile::parameter_set_from_string(f->parameters, "--parameters"));
      warn_untrusted(f->profile, link.link_class, link.distrust);
      std::vector<bool> extrapolated;
      const auto sizes = checked_sizes(*f, link, extrapolated);
      std::vector<report::OverlapPrediction> preds;
      for (const auto& m : models_of(*f, link.link)) {
        report::OverlapPrediction p{m.name(), {}};
        for (std::uint64_t k : sizes) {
          p.points.emplace_back(
              k, m.isend_compute_wait(
                     k, model::to_picoseconds(f->comp_us, "--comp-us"),
                     model::to_picoseconds(f->receiver_late_us, "--receiver-late-us")));
        }
        preds.push_back(std::move(p));
      }
      report::TableSink tables;
      std::fputs(report::overlap_prediction_table(preds, f->comp_us, &tables).c_str(), stdout);
      if (!f->tables_csv.empty()) write_text_file(f->tables_csv, tables.csv());
      if (!f->json.empty()) {
        auto header = header_of(*f, link);
        header["comp_us"] = f->comp_us;
        header["receiver_late_us"] = f->receiver_late_us;
        profile::write_json_file(f->json, report::overlap_prediction_json(preds, header));
      }
      return 0;
    };
  });
}

void add_models_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "models", "List the communication models predict and simulate know (the model registry).");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print the registry as JSON");
  cmd->callback([&action, json] {
    action = [json](int&, char**&) {
      if (*json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& m : model::model_infos())
          out.push_back(
              {{"name", m.name}, {"description", m.description}, {"citation", m.citation}});
        std::printf("%s\n", json_text(out, 2).c_str());
        return 0;
      }
      for (const auto& m : model::model_infos())
        std::printf("%-7s %s\n        (%s)\n", m.name.c_str(), m.description.c_str(),
                    m.citation.c_str());
      std::printf("none    communication is free (simulate only: the baseline)\n");
      return 0;
    };
  });
}

}  // namespace commgauge::cli
