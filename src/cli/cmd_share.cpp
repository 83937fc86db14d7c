#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "cli/checks.hpp"
#include "cli/failure.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/text_file.hpp"
#include "common/units.hpp"
#include "measure/share.hpp"
#include "model/scheme.hpp"
#include "model/sharing.hpp"
#include "net/group.hpp"
#include "net/launch.hpp"
#include "net/socket.hpp"
#include "net/tcp_group.hpp"
#include "profile/json_file.hpp"
#include "report/context.hpp"
#include "report/plot.hpp"
#include "report/share_report.hpp"

namespace commgauge::cli {

namespace {

report::Predictions predict(const std::string& which, const model::GigeParams& gige,
                            std::uint64_t set_limit, const model::Scheme& s) {
  report::Predictions out;
  const std::vector<std::string> names = which == "all"
                                             ? std::vector<std::string>{"fair", "gige", "myrinet"}
                                             : std::vector<std::string>{which};
  for (const auto& name : names) {
    out[name] = name == "myrinet" ? model::MyrinetModel(set_limit).scheme_penalties(s)
                                  : model::make_sharing_model(name, gige)->scheme_penalties(s);
  }
  return out;
}

// --nodes N: ranks spread over N emulated nodes by the scheme's placement; or a list.
std::vector<int> emulated_nodes(const std::string& text, int ranks, const std::string& placement) {
  std::vector<int> out;
  if (text.empty()) return out;
  if (text.find(',') == std::string::npos) {
    const int n = std::stoi(text);
    if (n < 1) throw InputError("--nodes", "must be at least 1");
    const int per_node = (ranks + n - 1) / n;
    for (int r = 0; r < ranks; ++r)
      out.push_back(placement == "rrp" ? r / per_node : r % n);
    return out;
  }
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    out.push_back(std::stoi(text.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// "0=ns0@10.78.0.1,1=ns1@10.78.0.2" (or "0=10.78.0.1" in this namespace).
std::vector<net::TcpNode> parse_tcp_nodes(const std::string& text, int nodes) {
  std::vector<net::TcpNode> out(static_cast<std::size_t>(nodes));
  if (text.empty()) return out;  // every node on 127.0.0.1 here
  std::vector<bool> given(out.size(), false);
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma - start);
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw InputError("--tcp-nodes",
                       fmt::format("expected NODE=[NETNS@]ADDRESS, got \"{}\"", item));
    const int node = std::stoi(item.substr(0, eq));
    if (node < 0) throw InputError("--tcp-nodes", fmt::format("node {} is negative", node));
    if (node >= nodes) {  // a lab mapping may name more nodes than this scheme uses
      if (comma == std::string::npos) break;
      start = comma + 1;
      continue;
    }
    const std::string where = item.substr(eq + 1);
    const auto at = where.find('@');
    net::TcpNode& t = out[static_cast<std::size_t>(node)];
    t.netns = at == std::string::npos ? "" : where.substr(0, at);
    t.address = at == std::string::npos ? where : where.substr(at + 1);
    given[static_cast<std::size_t>(node)] = true;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (std::size_t n = 0; n < given.size(); ++n) {
    if (!given[n]) throw InputError("--tcp-nodes", fmt::format("no address for node {}", n));
  }
  return out;
}

nlohmann::json job_of(const model::Scheme& s, const measure::ShareOptions& o) {
  nlohmann::json comms = nlohmann::json::array();
  for (const auto& c : s.communications) {
    comms.push_back({{"name", c.name},
                     {"source_node", c.source},
                     {"dest_node", c.destination},
                     {"bytes", c.bytes}});
  }
  return {{"method", "share"},          {"scheme", {{"nodes", s.nodes}, {"communications", comms}}},
          {"iterations", o.iterations}, {"warmup", o.warmup},
          {"rank_nodes", o.rank_nodes}, {"emulated", o.emulated}};
}

// One task process per task, in node order: rank 0 is the coordinator (node -1).
std::vector<int> task_layout(const model::Scheme& s) {
  std::vector<int> senders(static_cast<std::size_t>(s.nodes), 0);
  std::vector<bool> receives(static_cast<std::size_t>(s.nodes), false);
  for (const auto& c : s.communications) {
    ++senders[static_cast<std::size_t>(c.source)];
    receives[static_cast<std::size_t>(c.destination)] = true;
  }
  std::vector<int> nodes;
  for (int n = 0; n < s.nodes; ++n) {
    const int tasks =
        senders[static_cast<std::size_t>(n)] + (receives[static_cast<std::size_t>(n)] ? 1 : 0);
    for (int k = 0; k < tasks; ++k)
      nodes.push_back(n);
  }
  return nodes;
}

}  // namespace

void add_share_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "share",
      "Bandwidth sharing (seed 003): run a scheme of concurrent blocking sends (one sender task "
      "per communication, one receiver task per destination node with MPI_ANY_SOURCE, warm-up, "
      "barrier) and report each communication's penalty P = T / T_ref; or predict the penalties "
      "with the fair, GigE or Myrinet model without running anything.");
  struct Flags {
    std::string scheme, size, nodes, model, params, evaluate, json, tables_csv, plot;
    std::string transport = "mpi";
    measure::ShareOptions share;
    bool predict_only = false;
    std::string tcp_nodes;
    std::string coordinator_bind = "127.0.0.1";
    double io_timeout_s = 20, connect_timeout_s = 10, mpi_timeout_s = 60;
    std::uint64_t set_limit = 1'000'000;
  };
  auto f = std::make_shared<Flags>();
  cmd->add_option("--scheme", f->scheme, "the scheme file (see examples/schemes)")->required();
  cmd->add_option("--transport", f->transport,
                  "mpi (launch with mpirun, one rank per task) or tcp (this process coordinates "
                  "and starts one task process per task)")
      ->capture_default_str();
  cmd->add_option("--tcp-nodes", f->tcp_nodes,
                  "where each node's tasks run with --transport tcp: \"0=NETNS@ADDRESS,1=...\" "
                  "(NETNS@ optional); default: every node on 127.0.0.1 (functional only)");
  cmd->add_option("--coordinator-bind", f->coordinator_bind,
                  "address the task processes reach the coordinator at (tcp)")
      ->capture_default_str();
  cmd->add_option("--io-timeout", f->io_timeout_s,
                  "seconds a task may wait with nothing arriving (tcp); at most 1e6")
      ->check(kTimeLimit)
      ->capture_default_str();
  cmd->add_option("--connect-timeout", f->connect_timeout_s,
                  "seconds for every task to connect (tcp); at most 1e6")
      ->check(kTimeLimit)
      ->capture_default_str();
  cmd->add_option("--mpi-timeout", f->mpi_timeout_s,
                  "seconds one blocking MPI call may wait before the run ends with exit status 3 "
                  "(mpi: a stopped or dead rank); at most 1e6")
      ->check(kTimeLimit)
      ->capture_default_str();
  cmd->add_option("--iterations", f->share.iterations, "timed repetitions of the scheme")
      ->capture_default_str();
  cmd->add_option("--size", f->size,
                  "send this size in every communication (overrides the scheme)");
  cmd->add_option("--nodes", f->nodes,
                  "emulate nodes on one host: N (ranks placed by the scheme's placement, rrn or "
                  "rrp) or a list of the node of every rank \"0,0,1,1\"");
  cmd->add_flag("--predict", f->predict_only, "predict only, run nothing");
  cmd->add_option("--model", f->model, "fair, gige, myrinet or all (predictions)");
  cmd->add_option("--params", f->params,
                  "GigE parameters {\"beta\", \"gamma_o\", \"gamma_i\"} (default: seed 003's)");
  cmd->add_option("--state-set-limit", f->set_limit,
                  "Myrinet model: the most sets of communication states enumerated per connected "
                  "component before it gives up with an error; 1 to 1e7")
      ->check(within(1, 1e7))
      ->capture_default_str();
  cmd->add_option("--evaluate", f->evaluate,
                  "a share --json measurement to compare the predictions with");
  cmd->add_option("--json", f->json, "write the results as JSON");
  cmd->add_option("--plot", f->plot,
                  "draw the penalty of every communication, measured (with its interval) and "
                  "predicted per model (.png or .svg)");
  add_tables_csv_option(*cmd, f->tables_csv, "Options");
  cmd->callback([&action, f] {
    action = [f](int& argc, char**& argv) {
      if (!f->plot.empty()) report::check_plot_output(f->plot);
      model::Scheme s = model::read_scheme(f->scheme);
      if (!f->size.empty()) {
        const auto bytes = parse_byte_size(f->size, "--size");
        for (auto& c : s.communications)
          c.bytes = bytes;
      }
      const model::GigeParams gige = read_gige_params(f->params);
      if (f->predict_only || !f->evaluate.empty()) {
        if (f->predict_only && !f->nodes.empty())
          throw InputError("--nodes", "does not apply with --predict");
        const auto p = predict(f->model.empty() ? "all" : f->model, gige, f->set_limit, s);
        std::vector<double> measured;
        if (!f->evaluate.empty()) measured = report::read_measured_penalties(f->evaluate, s);
        std::printf("commgauge share: predicted penalties for %s\n", f->scheme.c_str());
        report::TableSink tables;
        std::fputs(report::share_table(s, std::nullopt, measured, p, &tables).c_str(), stdout);
        if (!f->tables_csv.empty()) write_text_file(f->tables_csv, tables.csv());
        if (!f->json.empty())
          profile::write_json_file(f->json, report::share_json(s, std::nullopt, measured, p, {}));
        if (!f->plot.empty())
          report::plot_share(f->plot, s, std::nullopt, measured, p, "share: " + f->scheme);
        return 0;
      }
      f->share.validate();
      std::optional<measure::ShareResult> r;
      nlohmann::json context;
      if (f->transport == "tcp") {
        if (!f->nodes.empty())
          throw InputError("--nodes", "applies to --transport mpi; use --tcp-nodes");
        const auto nodes = parse_tcp_nodes(f->tcp_nodes, s.nodes);
        const std::vector<int> layout = task_layout(s);
        f->share.rank_nodes = {-1};
        f->share.rank_nodes.insert(f->share.rank_nodes.end(), layout.begin(), layout.end());
        f->share.emulated = f->tcp_nodes.empty();
        net::TcpGroupOptions go;
        go.coordinator_bind = f->coordinator_bind;
        go.io_timeout =
            std::chrono::milliseconds(static_cast<std::int64_t>(f->io_timeout_s * 1000));
        go.connect_timeout =
            std::chrono::milliseconds(static_cast<std::int64_t>(f->connect_timeout_s * 1000));
        net::TcpGroupCoordinator coordinator(layout, nodes, job_of(s, f->share), go);
        r = measure::run_share(coordinator, s, f->share);
        if (!coordinator.finish()) throw TransportError("a task process did not end cleanly");
        context = coordinator.context();
      } else if (f->transport == "mpi") {
        auto group = net::make_mpi_group(
            argc, argv,
            std::chrono::milliseconds(static_cast<std::int64_t>(f->mpi_timeout_s * 1000)));
        f->share.rank_nodes = emulated_nodes(f->nodes, group->size(), s.placement);
        f->share.emulated = !f->share.rank_nodes.empty();
        try {
          r = measure::run_share(*group, s, f->share);
        } catch (const InputError&) {
          // The same input on every rank: main reports it once (the primary prints, the others
          // wait for the launcher to end the job).
          throw;
        } catch (const std::exception&) {
          const Failure failure = describe_failure(parsed_command_line(), std::current_exception());
          net::abort_mpi_group(failure.text.c_str(), failure.status);
          throw;
        }
        if (r) context = group->context();
      } else {
        throw InputError("--transport",
                         fmt::format("expected mpi or tcp, got \"{}\"", f->transport));
      }
      if (!r) return 0;
      std::vector<double> measured;
      for (const auto& c : r->communications)
        measured.push_back(c.penalty.value);
      const auto p =
          f->model.empty() ? report::Predictions{} : predict(f->model, gige, f->set_limit, s);
      context["commgauge_version"] = report::run_context({}, {})["commgauge_version"];
      context["command_line"] = report::command_line();
      std::printf("commgauge share %s over %s, %u iterations\n", f->scheme.c_str(),
                  f->transport.c_str(), f->share.iterations);
      report::TableSink tables;
      std::fputs(report::share_table(s, r, measured, p, &tables).c_str(), stdout);
      if (!f->tables_csv.empty()) write_text_file(f->tables_csv, tables.csv());
      if (!f->json.empty())
        profile::write_json_file(f->json, report::share_json(s, r, measured, p, context));
      if (!f->plot.empty()) report::plot_share(f->plot, s, r, measured, p, "share: " + f->scheme);
      return 0;
    };
  });
}

void add_share_task_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("share-task",
                                 "one task of a share run over TCP (started by the coordinator)");
  cmd->group("");  // internal
  struct Flags {
    std::string coordinator, bind = "127.0.0.1";
    int rank = 0;
    double io_timeout_s = 20;
  };
  auto f = std::make_shared<Flags>();
  cmd->add_option("--coordinator", f->coordinator)->required();
  cmd->add_option("--rank", f->rank)->required()->check(kNonNegative);
  cmd->add_option("--bind", f->bind);
  cmd->add_option("--io-timeout", f->io_timeout_s)->check(kTimeLimit);
  cmd->callback([&action, f] {
    action = [f](int&, char**&) {
      net::TcpGroupOptions o;
      o.io_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(f->io_timeout_s * 1000));
      net::TcpGroupMember member(net::parse_host_port(f->coordinator, "--coordinator"), f->rank,
                                 f->bind, o);
      const model::Scheme s = report::scheme_of_share_json(member.job(), "the coordinator's job");
      measure::ShareOptions so;
      so.iterations = member.job().at("iterations");
      so.warmup = member.job().at("warmup");
      so.rank_nodes = member.job().at("rank_nodes").get<std::vector<int>>();
      so.emulated = member.job().at("emulated");
      measure::run_share(member, s, so);
      return 0;
    };
  });
}

void add_share_fit_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "share-fit",
      "Fit the GigE model's beta, gamma_o and gamma_i (seed 003 §V-A) to measured schemes "
      "(share --json files): beta = mean P / Delta_o over simple outgoing conflicts, gammas "
      "from the communications where Definition 1's non-member branch decides.");
  struct Flags {
    std::vector<std::string> measured;
    std::string json;
  };
  auto f = std::make_shared<Flags>();
  cmd->add_option("--measured", f->measured, "share --json results (several)")->required();
  cmd->add_option("--json", f->json, "write the parameters here (for --params)");
  cmd->callback([&action, f] {
    action = [f](int&, char**&) {
      // The same measurement twice would count twice in every mean.
      std::set<std::filesystem::path> seen;
      for (const auto& path : f->measured) {
        std::error_code ec;
        const auto canonical = std::filesystem::weakly_canonical(path, ec);
        if (!seen.insert(ec ? std::filesystem::path(path) : canonical).second)
          throw InputError("--measured", path + " is given twice");
      }
      std::vector<std::pair<int, double>> outgoing;
      std::vector<std::pair<model::Scheme, std::vector<double>>> others;
      for (const auto& path : f->measured) {
        const auto doc = profile::read_json_file(path);
        const model::Scheme s = report::scheme_of_share_json(doc, path);
        const std::vector<double> p = report::read_measured_penalties(path, s);
        // A simple outgoing conflict: all from one node to distinct, otherwise idle nodes.
        const auto in = s.in_degree();
        bool simple = s.communications.size() >= 2;
        for (const auto& c : s.communications) {
          simple = simple && c.source == s.communications[0].source &&
                   in[static_cast<std::size_t>(c.destination)] == 1;
        }
        if (simple) {
          double mean = 0;
          for (double x : p)
            mean += x;
          outgoing.emplace_back(static_cast<int>(s.communications.size()),
                                mean / static_cast<double>(p.size()));
        } else {
          others.emplace_back(s, p);
        }
      }
      model::GigeParams params;
      params.beta = model::fit_beta(outgoing);
      double go_sum = 0, gi_sum = 0;
      int go_n = 0, gi_n = 0;
      for (const auto& [s, p] : others) {
        const auto [go, gi] = model::fit_gammas(s, p, params.beta);
        if (go >= 0) go_sum += go, ++go_n;
        if (gi >= 0) gi_sum += gi, ++gi_n;
      }
      params.gamma_o = go_n ? go_sum / go_n : 0;
      params.gamma_i = gi_n ? gi_sum / gi_n : 0;
      // What share --params would refuse is not written (a penalty of 1e300 fitted beta 2.5e299).
      check_gige_params(params, "the parameters fitted to the --measured files");
      std::printf(
          "GigE model (seed 003 §V-A): beta = %.4f from %zu outgoing conflict(s); "
          "gamma_o = %.4f from %d scheme(s); gamma_i = %.4f from %d scheme(s)\n",
          params.beta, outgoing.size(), params.gamma_o, go_n, params.gamma_i, gi_n);
      if (go_n == 0 || gi_n == 0) {
        std::printf(
            "note: a gamma without data is set to 0; measure a scheme like "
            "examples/schemes/fig4.sch to fit it\n");
      }
      if (!f->json.empty()) {
        profile::write_json_file(f->json, {{"beta", params.beta},
                                           {"gamma_o", params.gamma_o},
                                           {"gamma_i", params.gamma_i},
                                           {"fitted_from", f->measured}});
      }
      return 0;
    };
  });
}

}  // namespace commgauge::cli
