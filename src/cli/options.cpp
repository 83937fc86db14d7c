#include "cli/options.hpp"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "cli/checks.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "profile/json_file.hpp"
#include "profile/link_params_json.hpp"

namespace commgauge::cli {

namespace {
std::chrono::milliseconds seconds_option(double seconds, const std::string& name) {
  if (!(seconds > 0) || !std::isfinite(seconds))
    throw InputError(name, "must be a positive number of seconds");
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(seconds * 1000)));
}
}  // namespace

net::TransportOptions TransportFlags::resolve() const {
  const bool mpi = transport == "mpi", tcp = transport == "tcp", virt = transport == "virtual";
  if (!mpi && !tcp && !virt)
    throw InputError("--transport",
                     fmt::format("expected mpi, tcp or virtual, got \"{}\"", transport));
  if (!peer.empty() && !tcp) throw InputError("--peer", "only applies to --transport tcp");
  if (!virtual_net.empty() && !virt)
    throw InputError("--virtual-net", "only applies to --transport virtual");
  if (virt && virtual_net.empty())
    throw InputError("--transport virtual", "needs --virtual-net FILE.json (link parameters)");
  if (!mpi && clock != "steady")
    throw InputError("--clock", fmt::format("{} is only available with --transport mpi", clock));
  if (mpi_thread_level != "single" && mpi_thread_level != "funneled" &&
      mpi_thread_level != "serialized" && mpi_thread_level != "multiple")
    throw InputError("--mpi-thread-level",
                     fmt::format("expected single, funneled, serialized or multiple, got \"{}\"",
                                 mpi_thread_level));
  if (!mpi && mpi_thread_level != "single")
    throw InputError("--mpi-thread-level", "only applies to --transport mpi");
  net::TransportOptions o;
  o.kind = transport;
  o.source = source;
  o.dest = dest;
  o.clock = clock;
  if (!peer.empty()) o.peer = net::parse_host_port(peer, "--peer");
  o.connect_timeout = seconds_option(connect_timeout_s, "--connect-timeout");
  o.io_timeout = seconds_option(io_timeout_s, "--io-timeout");
  o.mpi_call_limit = seconds_option(mpi_timeout_s, "--mpi-timeout");
  o.mpi_thread_level = mpi_thread_level;
  if (virt) o.virtual_link = profile::read_link_params(virtual_net);
  return o;
}

void add_tables_csv_option(CLI::App& app, std::string& file, const std::string& group) {
  app.add_option("--tables-csv", file,
                 "write every table printed as one CSV, table,row,column,value (- for standard "
                 "output)")
      ->group(group);
}

void add_loggp_budget_options(CLI::App& app, measure::LoggpOptions& loggp, std::string& max_bytes,
                              const std::string& whose, const std::string& group) {
  max_bytes = fmt::format("{:g}GB", static_cast<double>(loggp.max_bytes) / 1e9);
  const std::string scaled =
      " (the default is for the default sweep; a sweep whose first rounds move more, e.g. a "
      "larger --max-size, gets more in proportion)";
  app.add_option("--max-messages", loggp.max_messages,
                 "messages (both directions) " + whose + " may use" + scaled)
      ->capture_default_str()
      ->group(group);
  app.add_option("--max-bytes", max_bytes, "bytes (both directions) " + whose + " may use" + scaled)
      ->capture_default_str()
      ->group(group);
}

void apply_loggp_budget(const CLI::App& app, measure::LoggpOptions& loggp,
                        const std::string& max_bytes, const measure::LoggpOptions& reference) {
  const bool own_messages = app.count("--max-messages") > 0;
  const bool own_bytes = app.count("--max-bytes") > 0;
  if (own_bytes) loggp.max_bytes = parse_byte_size(max_bytes, "--max-bytes");
  if (!own_messages || !own_bytes)
    measure::scale_budgets_to_sweep(loggp, reference, !own_messages, !own_bytes);
}

void add_transport_options(CLI::App& app, TransportFlags& f) {
  const std::string group = "Transport";
  app.add_option("--transport", f.transport,
                 "mpi (launch with mpirun/srun), tcp (against 'commgauge serve'; without --peer a "
                 "local peer is started on 127.0.0.1) or virtual (the LogGP(S) virtual network of "
                 "--virtual-net)")
      ->capture_default_str()
      ->group(group);
  app.add_option("--source", f.source, "MPI rank that times (seed 002's source)")
      ->capture_default_str()
      ->group(group);
  app.add_option("--dest", f.dest, "MPI rank that answers")->capture_default_str()->group(group);
  app.add_option("--clock", f.clock,
                 "timer of the MPI transport: steady (std::chrono::steady_clock, the default) or "
                 "wtime (MPI_Wtime); TCP always uses steady, the virtual network its own clock")
      ->capture_default_str()
      ->group(group);
  app.add_option("--peer", f.peer, "TCP peer HOST:PORT running 'commgauge serve'")->group(group);
  app.add_option("--connect-timeout", f.connect_timeout_s,
                 "seconds to wait for a TCP connection; at most 1e6")
      ->check(kTimeLimit)
      ->capture_default_str()
      ->group(group);
  app.add_option(
         "--io-timeout", f.io_timeout_s,
         "seconds a TCP call may wait with no byte moving before the peer counts as dead; at "
         "most 1e6")
      ->check(kTimeLimit)
      ->capture_default_str()
      ->group(group);
  app.add_option(
         "--mpi-timeout", f.mpi_timeout_s,
         "seconds one blocking MPI call (send, receive, wait, barrier; 10 times this for MPI_Init, "
         "MPI_Finalize and a phase's other collective start) may wait before the run ends with "
         "exit status 3, naming the peer (a stopped or dead rank); "
         "long, as a rank may wait while the other analyses; at most 1e6")
      ->check(kTimeLimit)
      ->capture_default_str()
      ->group(group);
  app.add_option("--mpi-thread-level", f.mpi_thread_level,
                 "thread level MPI_Init_thread requests: single (what MPI_Init gives, as most "
                 "programs run), funneled, serialized or multiple (what a threaded program pays: "
                 "Open MPI locks every call above single)")
      ->capture_default_str()
      ->group(group);
  app.add_option("--virtual-net", f.virtual_net,
                 "link-parameter JSON (schemas/link-params.v1.schema.json) for --transport virtual")
      ->group(group);
}

void warn(const std::string& text) {
  std::fflush(stdout);
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

void warn_untrusted(const std::string& profile_file, const std::string& link_class,
                    const std::vector<std::string>& reasons) {
  if (reasons.empty()) return;
  std::string text = fmt::format(
      "warning: {}: link class {} was measured but is NOT trusted; what it predicts may be far "
      "off:",
      profile_file, link_class);
  for (const auto& r : reasons)
    text += "\n  " + r;
  warn(text + "\n");
}

model::GigeParams read_gige_params(const std::string& path) {
  model::GigeParams p;
  if (path.empty()) return p;
  const auto doc = profile::read_json_file(path);
  try {
    p.beta = doc.at("beta").get<double>();
    p.gamma_o = doc.at("gamma_o").get<double>();
    p.gamma_i = doc.at("gamma_i").get<double>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(path, "expected {\"beta\": ..., \"gamma_o\": ..., \"gamma_i\": ...}");
  }
  check_gige_params(p, path);
  return p;
}

void check_gige_params(const model::GigeParams& p, const std::string& where) {
  const std::string& path = where;
  // beta is a penalty per conflicting communication (seed 003 measured about 1); bounded so that
  // beta times a node's degree (at most 999999) stays a finite penalty.
  if (!(p.beta > 0 && p.beta <= 1e6))
    throw InputError(path, fmt::format("/beta: must be a number in (0, 1e6], got {}", p.beta));
  // Definition 1's non-member factor 1 - gamma / card (card >= 1) must not turn negative, and a
  // gamma is a coefficient of extra penalty (share-fit never fits one below 0): a negative one
  // could drive a penalty to 0 or below (an infinite rate).
  for (const auto& [name, gamma] : {std::pair{"/gamma_o", p.gamma_o}, {"/gamma_i", p.gamma_i}}) {
    if (!std::isfinite(gamma) || gamma > 1 || gamma < 0)
      throw InputError(path,
                       fmt::format("{}: must be a finite number in [0, 1], got {}", name, gamma));
  }
}

}  // namespace commgauge::cli
