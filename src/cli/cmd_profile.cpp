#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "cli/checks.hpp"
#include "cli/failure.hpp"
#include "cli/options.hpp"
#include "cli/run_guard.hpp"
#include "common/error.hpp"
#include "common/text_file.hpp"
#include "common/units.hpp"
#include "measure/call_costs.hpp"
#include "measure/heldout.hpp"
#include "measure/latency.hpp"
#include "measure/limits.hpp"
#include "measure/loggp.hpp"
#include "measure/overlap.hpp"
#include "measure/trust.hpp"
#include "model/models.hpp"
#include "profile/json_file.hpp"
#include "profile/profile.hpp"
#include "report/context.hpp"
#include "report/heldout_report.hpp"
#include "report/latency_mode_report.hpp"
#include "report/latency_report.hpp"
#include "report/loggp_report.hpp"
#include "report/overlap_report.hpp"
#include "report/progress_bar.hpp"
#include "sim/network.hpp"
#include "sim/simulator.hpp"
#include "synth/synth.hpp"
#include "trace/reader.hpp"

namespace commgauge::cli {

namespace {

// Which link class the run measured, and what carried the messages.
std::pair<std::string, std::string> link_class_of(const std::string& requested,
                                                  const std::string& label,
                                                  const net::TransportOptions& t,
                                                  const nlohmann::json& context) {
  const auto hosts = context.value("hosts", nlohmann::json::array());
  const bool same_host = hosts.size() == 2 && hosts[0] == hosts[1];
  if (requested == "auto" || requested.empty()) {
    return same_host ? std::make_pair("intra_node", "local")
                     : std::make_pair("inter_node", "network");
  }
  if (requested == "intra_node") {
    if (!same_host) throw InputError("--link-class", "intra_node needs both ends on one host");
    return {"intra_node", "local"};
  }
  if (requested != "inter_node") {
    throw InputError("--link-class",
                     fmt::format("expected auto, intra_node or inter_node, got \"{}\"", requested));
  }
  if (!same_host) return {"inter_node", "network"};
  // One host: only a real link between network namespaces counts, never the local kernel path.
  const bool loopback_peer = !t.peer || t.peer->host.rfind("127.", 0) == 0 ||
                             t.peer->host == "localhost" || t.peer->host == "::1";
  if (t.kind != "tcp" || loopback_peer || label.empty()) {
    throw InputError(
        "--link-class",
        "inter_node on one host needs a real link between network namespaces: "
        "--transport tcp --peer ADDRESS (not loopback) and --link-label describing it");
  }
  return {"inter_node", "namespaces"};
}

// The held-out collectives and exchanges as each model predicts them: a synthetic 2-rank trace
// of as many calls as the cell times back to back, replayed by the simulator (Open MPI's tuned
// rules pick the algorithm, as in simulate), per call; an exchange is synth's ring over 2 ranks
// (Isend to the other, Irecv from it, Waitall), per iteration. The trace is written to a scratch
// directory and removed.
std::optional<double> predicted_collective_us(measure::HeldOutKind kind, std::uint64_t bytes,
                                              const std::string& model,
                                              const model::LinkParams& link) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      fmt::format("commgauge-heldout-{}-{}", getpid(), measure::to_string(kind));
  synth::SynthOptions so;
  const bool exchange = kind == measure::HeldOutKind::exchange;
  so.pattern = exchange ? "ring" : measure::to_string(kind);
  so.ranks = 2;
  so.iterations = measure::kHeldOutCollectiveCalls;
  so.bytes = bytes;
  const auto written = synth::write_synthetic_trace(so, dir, true);
  const trace::TraceReader trace(written.file);
  const std::vector<std::uint32_t> nodes = {0, 0};
  // The cells time calls long after the process's first (the transport made those before
  // anything): a first call's one-time cost is no part of them. Charged, it added 5-12 us to
  // every 8-call cell of MPI_Allreduce (held-out E_abs 434 % instead of 4 %, 2026-12-06).
  model::LinkParams steady = link;
  steady.first_call_us.clear();
  const sim::Network net(model, {{"intra_node", steady}, {"inter_node", steady}},
                         sim::cluster_of_placement(nodes), nodes);
  // The transport's buffers start on a page (net::PageAlignedBytes); Open MPI's temporaries
  // do not (collectives::Step::send_from_temporary).
  sim::Options options;
  options.page_aligned_buffers = true;
  const sim::Result r = sim::simulate(trace, net, options);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (exchange) return model::to_microseconds(r.predicted_ps) / static_cast<double>(so.iterations);
  const std::string name =
      kind == measure::HeldOutKind::allreduce ? "MPI_Allreduce" : "MPI_Alltoall";
  const auto it = r.functions.find(name);
  if (it == r.functions.end() || it->second.calls == 0) return std::nullopt;
  return model::to_microseconds(it->second.predicted_ps) / static_cast<double>(it->second.calls);
}

// Every model's prediction of every held-out point, from the profile's link.
std::vector<report::HeldOutPrediction> predict_heldout(const measure::HeldOutResult& r,
                                                       const model::LinkParams& link) {
  std::vector<report::HeldOutPrediction> out;
  for (const auto& info : model::model_infos()) {
    report::HeldOutPrediction p;
    p.model = info.name;
    try {
      const auto m = model::make_model(info.name, link);
      for (const auto& pt : r.points) {
        if (pt.kind == measure::HeldOutKind::pingpong) {
          p.predicted_us.push_back(model::to_microseconds(m.round_trip(pt.bytes)) / 2);
        } else {
          p.predicted_us.push_back(predicted_collective_us(pt.kind, pt.bytes, info.name, link));
        }
      }
    } catch (const InputError& e) {
      p.predicted_us.assign(r.points.size(), std::nullopt);
      p.not_applicable = e.what();
    }
    out.push_back(p);
  }
  return out;
}

// The pairs to measure. Over MPI with --link-class auto, the default pair and ranks on more than
// one host: rank 0 with the first other rank on its host (intra_node), then with the first rank
// on another host (inter_node). Otherwise the pair the options name.
std::vector<std::pair<int, int>> pairs_to_measure(const net::PairRunner& runner,
                                                  const net::TransportOptions& t,
                                                  const std::string& link_class) {
  const std::vector<std::pair<int, int>> named = {{t.source, t.dest}};
  if (t.kind != "mpi" || (link_class != "auto" && !link_class.empty()) || t.source != 0 ||
      t.dest != 1)
    return named;
  const std::vector<std::string> hosts = runner.hosts();  // collective: every rank calls it
  int same = -1, other = -1;
  for (int r = 1; r < static_cast<int>(hosts.size()); ++r) {
    const bool here = hosts[static_cast<std::size_t>(r)] == hosts[0];
    if (here && same < 0) same = r;
    if (!here && other < 0) other = r;
  }
  if (other < 0 || hosts.size() < 3) return named;
  std::vector<std::pair<int, int>> out;
  if (same >= 0) out.emplace_back(0, same);
  out.emplace_back(0, other);
  return out;
}

// Held out: a ping-pong at the sizes the loggp sweep skips, exchanges over every transport and,
// over MPI, small collectives (8 B to 64 KiB in powers of 4): cells of loggp's first rounds,
// shuffled with the sweep, never fitted.
void lay_out_heldout(measure::LoggpOptions& lo, bool collectives) {
  lo.heldout_sizes = measure::midpoints(lo.sweep_sizes());
  lo.heldout_exchange_sizes.clear();
  for (std::uint64_t s = 8; s <= std::min<std::uint64_t>(lo.max_size, 65536); s *= 4)
    lo.heldout_exchange_sizes.push_back(s);
  if (lo.max_size >= 65536) lo.heldout_exchange_sizes.push_back(65536);
  lo.heldout_collective_sizes.clear();
  if (collectives) lo.heldout_collective_sizes = lo.heldout_exchange_sizes;
}

}  // namespace

void add_profile_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "profile",
      "Measure this machine's profile in one go: loggp (LogGP(S) ranges), overlap (LogGPO) and "
      "latency, written as one versioned JSON document per link class (intra_node, inter_node). "
      "An existing profile file gets the measured class added or replaced. Each class gets a "
      "trust verdict (loggp.trust): its calibrated set within 20 % rms of its curves and, over "
      "Open MPI, a rendezvous switch found at the eager limit MPI_T reports; predict and simulate "
      "warn when they charge a class that is not trusted.");
  struct Flags {
    TransportFlags transport;
    std::string output, tables_csv;
    std::string max_size = "256KiB";
    measure::LoggpOptions loggp;  ///< its budgets, from the flags
    std::string max_bytes;
    std::string latency_sizes;
    std::string link_class = "auto";
    std::string link_label;
    measure::TimerOptions timer;
    std::uint64_t latency_trials = 2000;
    bool no_streams = false;
    bool bill_by_pages = false;
  };
  auto f = std::make_shared<Flags>();
  f->timer.trials = std::uint64_t{1} << 22;
  add_transport_options(*cmd, f->transport);
  cmd->add_option("-o,--output", f->output, "the profile file to write (or update)")
      ->required()
      ->check(kResultFile);
  add_tables_csv_option(*cmd, f->tables_csv, "Options");
  cmd->add_option("--max-size", f->max_size, "largest message size measured")
      ->capture_default_str();
  cmd->add_option("--points-per-octave", f->loggp.points_per_octave,
                  fmt::format("density of the loggp part's geometric sweep (at most {:g})",
                              measure::kMaxPointsPerOctave))
      ->capture_default_str();
  add_loggp_budget_options(*cmd, f->loggp, f->max_bytes, "the loggp part", "Options");
  cmd->add_option("--latency-sizes", f->latency_sizes,
                  "sizes of the latency part (default: 1:max:4; at most 10000)");
  name_field(*cmd, "trials", "--latency-trials");
  cmd->add_option("--latency-trials", f->latency_trials, "trials per latency size")
      ->capture_default_str();
  cmd->add_option("--link-class", f->link_class,
                  "auto (by the hosts), intra_node or inter_node (one host: only a link between "
                  "network namespaces, with --link-label)")
      ->check(CLI::IsMember({"auto", "intra_node", "inter_node"}))  // before any measuring
      ->capture_default_str();
  cmd->add_option("--link-label", f->link_label, "what the link is, e.g. \"veth, tbf 200 Mbit/s\"");
  cmd->add_flag("--no-streams", f->no_streams,
                "loggp measures no streams of nonblocking sends and no send calls: a rendezvous "
                "or acknowledged (TA) range keeps the calibrated g, G and O_r (TA: o_s, O_s), "
                "which its PRTTs cannot tell apart");
  cmd->add_flag("--bill-by-pages", f->bill_by_pages, kBillByPagesHelp);
  cmd->add_option("--timer-trials", f->timer.trials, "timer pairs (seed 002 §3.1)")
      ->capture_default_str();
  cmd->callback([&action, f, cmd] {
    action = [f, cmd](int& argc, char**& argv) {
      const std::uint64_t max_size = parse_byte_size(f->max_size, "--max-size");
      if (max_size == 0) throw InputError("--max-size", "must be at least 1 B");
      measure::LoggpOptions lo = f->loggp;
      lo.max_size = max_size;
      lo.validate();
      measure::OverlapOptions oo;
      oo.max_size = max_size;
      oo.validate();
      measure::LatencyOptions la;
      la.sizes = parse_size_list(
          f->latency_sizes.empty() ? fmt::format("1:{}:4", max_size) : f->latency_sizes,
          "--latency-sizes");
      la.trials = f->latency_trials;
      la.validate();
      f->timer.validate();
      // Refuse to clobber a file that is not a profile before measuring anything.
      profile::Profile prof;
      // A FIFO or device is written into, not read (kResultFile refused a directory).
      if (std::filesystem::is_regular_file(f->output)) prof = profile::read_profile(f->output);
      const net::TransportOptions topts = f->transport.resolve();
      lay_out_heldout(lo, topts.kind == "mpi");
      lo.streams = !f->no_streams;
      if (f->bill_by_pages) lo.page_bytes = net::kPageBytes;
      // The budgets the user named none of follow the sweep: those of a default profile over the
      // same transport, scaled to what this one's first rounds move.
      measure::LoggpOptions reference;
      lay_out_heldout(reference, topts.kind == "mpi");
      apply_loggp_budget(*cmd, lo, f->max_bytes, reference);
      lo.validate();
      auto runner = net::make_runner(topts, argc, argv);
      report::TerminalProgress progress;
      measure::TimerCharacterization timer;
      // Over MPI with ranks on several hosts (--link-class auto): both link classes in one run,
      // each from rank 0 (pairs_to_measure); otherwise the one pair the options name.
      std::vector<std::pair<int, int>> pairs;
      run_guarded(*runner, [&] {
        pairs = pairs_to_measure(*runner, topts, f->link_class);
        if (runner->reports())
          timer = measure::characterize_timer(runner->source_clock(), f->timer);
      });
      for (const auto& pair : pairs) {
        if (pairs.size() > 1) {
          run_guarded(*runner, [&] { runner->select_pair(pair.first, pair.second); });
        }
        std::optional<measure::LoggpResult> loggp;
        std::optional<measure::OverlapResult> overlap;
        std::optional<measure::LatencyResult> latency;
        std::optional<measure::CallCosts> calls;
        measure::CallCostOptions co;
        // The later phases in loggp's latency mode (measure/latency_mode.hpp), over MPI: only the
        // source holds loggp's result and tells the dest what to probe. Not over TCP, where a
        // probe after the pair idled read 210-350 us for 10 s at a time against 4-6 us in
        // loggp's rounds (cause not found), nor on the virtual network (one mode).
        const bool probes_mode = topts.kind == "mpi";
        std::optional<measure::LatencyModeBand> mode_band;
        report::PhaseModeChecks phase_modes;  // on the source, in the order run
        nlohmann::json transport_context;
        // A profile is what predict and simulate trust: none from a method a transport failure
        // interrupted (each keeps what it measured on its own, not here).
        const auto whole = [](const std::string& method, const std::string& interrupted,
                              const std::string& done) {
          if (!interrupted.empty()) {
            throw TransportError(fmt::format("{} ({} ended after {}; no profile is written)",
                                             interrupted, method, done));
          }
        };
        run_guarded(*runner, [&] {
          runner->run({"loggp", lo}, [&](net::Transport& t) {
            if (auto r = measure::measure_loggp(t, lo, &progress)) {
              whole("loggp", r->interrupted, fmt::format("{} complete rounds", r->rounds));
              loggp = std::move(r);
              transport_context = t.context();
            }
          });
          if (loggp && probes_mode)
            mode_band = measure::latency_mode_band(*loggp, timer.res_timing_us);
          // A phase after a wait for the mode (measure::phase_mode_check: no probe after it).
          const auto in_mode = [&](const char* phase, const auto& measure_phase) {
            if (!probes_mode) return measure_phase();
            std::vector<measure::ModeProbe> before;
            const measure::ModeWaitOptions mw{mode_band, co.mode_wait_s};
            const auto from = measure::Wall::clock::now();
            runner->run({"latency-mode", mw}, [&](net::Transport& t) {
              auto p = measure::wait_for_latency_mode(t, mw);
              if (!p.empty()) before = std::move(p);
            });
            const double waited_s = measure::seconds_between(from, measure::Wall::clock::now());
            measure_phase();
            if (mode_band && !before.empty())
              phase_modes.emplace_back(phase,
                                       measure::phase_mode_check(*mode_band, before, waited_s));
          };
          // Overlap over the same ranges; the dest needs no link (it only obeys commands).
          const std::optional<model::LinkParams> ranges =
              loggp ? std::optional<model::LinkParams>(loggp->link) : std::nullopt;
          in_mode("overlap", [&] {
            runner->run({"overlap", oo}, [&](net::Transport& t) {
              if (auto r = measure::measure_overlap(t, oo, ranges, &progress)) {
                whole("overlap", r->interrupted, fmt::format("{} sizes", r->points.size()));
                overlap = std::move(r);
              }
            });
          });
          in_mode("latency", [&] {
            runner->run({"latency", la}, [&](net::Transport& t) {
              if (auto r = measure::measure_latency(t, la, timer, &progress)) {
                whole("latency", r->interrupted, fmt::format("{} sizes", r->points.size()));
                latency = std::move(r);
              }
            });
          });
          if (topts.kind != "virtual") {
            // The call costs wait, probe and measure again themselves: the replay charges them.
            if (probes_mode) co.mode = mode_band;
            runner->run({"call-costs", co}, [&](net::Transport& t) {
              if (auto r = measure::measure_call_costs(t, co)) calls = std::move(r);
            });
            if (calls && calls->mode) phase_modes.emplace_back("call_costs", *calls->mode);
          }
        });
        if (!loggp) continue;
        const nlohmann::json context = report::run_context(transport_context, timer);
        const auto [cls, carried] = link_class_of(f->link_class, f->link_label, topts, context);
        measure::adopt_overlap(*loggp, lo, *overlap);
        if (calls) measure::adopt_call_costs(*loggp, *calls);
        const model::LinkParams& link = loggp->link;
        nlohmann::json source = {{"kind", "measured"},
                                 {"method", "loggp + overlap + latency"},
                                 {"transport", context.value("transport", "?")},
                                 {"hosts", context.value("hosts", nlohmann::json::array())},
                                 {"link", carried},
                                 {"date_utc", context.value("date_utc", "")},
                                 {"commgauge_version", context.value("commgauge_version", "")},
                                 {"measured_min_bytes", loggp->points.front().bytes},
                                 {"measured_max_bytes", loggp->points.back().bytes},
                                 {"context", context}};
        if (!f->link_label.empty()) source["link_label"] = f->link_label;
        nlohmann::json latency_section = {{"results", nlohmann::json::array()}};
        for (const auto& p : latency->points) {
          latency_section["results"].push_back({{"size_bytes", p.size_bytes},
                                                {"min_us", p.stats.min},
                                                {"median_us", p.stats.median},
                                                {"mean_us", p.stats.mean},
                                                {"max_us", p.stats.max},
                                                {"trials", p.stats.count},
                                                {"npp_used", p.npp_used}});
        }
        profile::LinkClass lc{link,
                              loggp->seed_link,
                              source,
                              report::overlap_profile_section(*overlap),
                              latency_section,
                              nlohmann::json(),
                              nlohmann::json(),
                              nlohmann::json(),
                              {}};
        const measure::HeldOutResult heldout = measure::heldout_of(*loggp);
        const auto predictions = predict_heldout(heldout, link);
        lc.heldout = report::heldout_json(heldout, predictions);
        std::optional<double> heldout_pingpong;
        for (const auto& s : report::summarise_heldout(heldout, predictions))
          if (s.model == "loggps" && s.kind == measure::to_string(measure::HeldOutKind::pingpong))
            heldout_pingpong = s.median_abs_error;
        const measure::Trust trust = measure::assess_trust(
            loggp->calibrated_check, latency->points, measure::library_eager_limit(context),
            {loggp->switches, loggp->points.front().bytes, loggp->points.back().bytes,
             heldout_pingpong});
        lc.loggp = {{"switches", report::loggp_switches_json(*loggp)},
                    {"notes", loggp->notes},
                    {"rounds", loggp->rounds},
                    {"trust", report::trust_json(trust)}};
        if (!loggp->exchanges.empty()) lc.loggp["exchanges"] = report::loggp_exchanges_json(*loggp);
        if (!loggp->streams.empty()) lc.loggp["streams"] = report::loggp_streams_json(*loggp);
        if (!loggp->send_calls.empty()) {
          lc.loggp["send_calls"] = report::loggp_send_calls_json(*loggp);
        }
        lc.distrust = trust.reasons;
        if (!phase_modes.empty()) lc.latency_mode = report::latency_mode_json(phase_modes);
        prof.classes[cls] = lc;
        if (prof.description.empty()) prof.description = "measured by commgauge profile";
        // Validate what is written exactly as a reader will.
        const nlohmann::json doc = profile::profile_to_json(prof);
        profile::profile_from_json(doc, f->output);
        profile::write_json_file(f->output, doc);
        // The thread level MPI provided: Open MPI's calls cost more above single.
        const std::string level = context.value("mpi_thread_level", "");
        std::fputs(fmt::format("commgauge profile over {}{} -> {}, link class {} ({})\n\n",
                               context.value("transport", "?"),
                               level.empty() ? "" : " (thread level " + level + ")", f->output, cls,
                               carried)
                       .c_str(),
                   stdout);
        report::TableSink tables;
        std::fputs(report::loggp_table(*loggp, &tables).c_str(), stdout);
        std::fputs(("\n" + report::overlap_table(*overlap, &tables)).c_str(), stdout);
        std::fputs(("\n" + report::latency_table(*latency, la, &tables)).c_str(), stdout);
        std::fputs(("\n" + report::heldout_table(heldout, predictions, &tables)).c_str(), stdout);
        if (!f->tables_csv.empty()) write_text_file(f->tables_csv, tables.csv());
        const std::string verdict = report::trust_line(cls, trust);
        std::fputs(("\n" + verdict).c_str(), stdout);
        if (!trust.trusted) warn("commgauge profile: " + verdict);
        if (calls) {
          std::printf(
              "\nfailed poll (MPI_Test of a pending receive; simulate charges it per failed call "
              "of a poll run): %.4g us [%.4g, %.4g], median of %u rounds, %llu calls in all\n",
              calls->poll.median_us, calls->poll.lower_us, calls->poll.upper_us, co.rounds,
              static_cast<unsigned long long>(calls->poll_calls_timed));
          if (!calls->first_calls.empty()) {
            // One process, one first call each: the figures have no interval.
            std::string line =
                "first calls (each function's first call right after MPI_Init, then the least of "
                "its next three; simulate charges the difference once per rank, at its first "
                "call):";
            for (const auto& call : calls->first_calls) {
              line +=
                  fmt::format(" {} {:.4g}/{:.4g}{}", call.function, call.first_us, call.second_us,
                              call.preempted ? " (preempted: not charged)" : "");
            }
            std::printf("%s us\n", line.c_str());
          }
          if (!calls->self_message.empty()) {
            std::string line =
                "a message to oneself (MPI_Irecv, MPI_Isend, MPI_Waitall; simulate charges the "
                "sender this, interpolated, for a message a rank sends itself):";
            for (const auto& m : calls->self_message) {
              line += fmt::format(" {} B {:.4g} us [{:.4g}, {:.4g}]", m.bytes, m.stat.median_us,
                                  m.stat.lower_us, m.stat.upper_us);
              if (&m != &calls->self_message.back()) line += ",";
            }
            std::printf("%s\n", line.c_str());
          }
          if (calls->comm_create) {
            std::printf(
                "communicator creation (MPI_Comm_dup less an MPI_Allreduce of 4 B; simulate "
                "charges it per created communicator): %.4g us [%.4g, %.4g]; MPI_Comm_free: %.4g "
                "us [%.4g, %.4g]\n",
                calls->comm_create->median_us, calls->comm_create->lower_us,
                calls->comm_create->upper_us, calls->comm_free->median_us,
                calls->comm_free->lower_us, calls->comm_free->upper_us);
          }
          if (calls->collective_call) {
            std::printf(
                "a collective call's own cost (MPI_Barrier of the pair less an exchange of 0 B; "
                "simulate charges it once per collective call on each rank): %.4g us [%.4g, "
                "%.4g]%s\n",
                calls->collective_call->median_us, calls->collective_call->lower_us,
                calls->collective_call->upper_us,
                measure::collective_call_shown(*calls) ? ""
                                                       : " (not charged: its interval reaches 0)");
          }
          std::printf(
              "a collective's local work per KiB (64 KiB less 4 KiB, warm; simulate charges it for "
              "what a step combines and what coll/base copies): copy %.4g us [%.4g, %.4g]",
              1024 * calls->copy_per_byte.median_us, 1024 * calls->copy_per_byte.lower_us,
              1024 * calls->copy_per_byte.upper_us);
          if (calls->reduce_per_byte) {
            std::printf("; reduction (MPI_Reduce_local, doubles, MPI_SUM) %.4g us [%.4g, %.4g]",
                        1024 * calls->reduce_per_byte->median_us,
                        1024 * calls->reduce_per_byte->lower_us,
                        1024 * calls->reduce_per_byte->upper_us);
          }
          std::printf("\n");
          if (calls->reduce_per_call) {
            std::printf(
                "a reduction's own cost per call (MPI_Reduce_local of one double less its byte; "
                "simulate charges it per step that combines): %.4g us [%.4g, %.4g]\n",
                calls->reduce_per_call->median_us, calls->reduce_per_call->lower_us,
                calls->reduce_per_call->upper_us);
          }
          // A per-byte cost with its interval, printed per KiB.
          auto per_kib = [](const char* what, const std::optional<measure::PrttStat>& stat) {
            if (!stat) return;
            std::printf("%s: %.4g us [%.4g, %.4g]\n", what, 1024 * stat->median_us,
                        1024 * stat->lower_us, 1024 * stat->upper_us);
          };
          per_kib(
              "a reduction into the buffer a 64 KiB exchange has just sent from, per KiB "
              "(simulate charges it where a step of recursive doubling combines into what it "
              "sent from a rendezvous range)",
              calls->reduce_into_sent_per_byte);
          per_kib(
              "a copy into that buffer, per KiB (simulate charges it where an allreduce copies "
              "into the result vector the previous call's ring or Rabenseifner sent from)",
              calls->copy_into_sent_per_byte);
          per_kib(
              "a transfer of data its sender has just written, per KiB more than of unchanged "
              "data (64 KiB exchanges; simulate adds it to pulled transfers of what a "
              "collective's step copied, combined or received earlier in the call)",
              calls->written_send_per_byte);
          per_kib(
              "a transfer into the buffer its receiver has just sent to the peer from, per KiB "
              "more than into another (64 KiB; simulate adds it to pulled transfers a ring or "
              "Rabenseifner allreduce receives into the block it sent)",
              calls->recv_into_sent_per_byte);
          per_kib(
              "a receive into memory never touched, per KiB more than into a touched buffer "
              "(256 KiB; simulate adds it for the bytes of a receive's buffer the tracer found in "
              "pages never touched)",
              calls->fresh_memory_per_byte);
          per_kib(
              "a copy between 64 KiB exchanges, per KiB (what a copy of 64 KiB adds to a loop of "
              "them; simulate charges it instead of the warm copy for a collective's own-data "
              "copy where the rank's messages in the call are rendezvous)",
              calls->copy_after_rendezvous_per_byte);
        }
        if (topts.kind == "tcp") {
          std::fputs(
              "latency mode: not checked over TCP (a probe after an idle pause does not read "
              "the link's round trip there; docs/measurements.md, \"Over TCP, and after a "
              "phase\")\n",
              stdout);
        } else if (!mode_band && probes_mode) {
          std::fputs(
              "latency mode: not checked (loggp has fewer than 4 rounds at its smallest size)\n",
              stdout);
        }
        for (const auto& [phase, check] : phase_modes) {
          const std::string line = report::latency_mode_line(phase, check);
          std::fputs(line.c_str(), stdout);
          if (!check.held) warn("commgauge profile: " + line);
        }
      }
      return 0;
    };
  });
}

}  // namespace commgauge::cli
