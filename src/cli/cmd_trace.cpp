// commgauge trace, trace-dump, trace-summary: record an MPI program with the PMPI tracer and
// look at what was recorded.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>

#include <fmt/format.h>

#include "cli/checks.hpp"
#include "cli/options.hpp"
#include "cli/trace_boundary.hpp"
#include "collectives/algorithms.hpp"
#include "common/child_job.hpp"
#include "common/error.hpp"
#include "common/json_text.hpp"
#include "common/text_file.hpp"
#include "profile/json_file.hpp"
#include "report/trace_report.hpp"
#include "trace/check.hpp"
#include "trace/export_otf2.hpp"
#include "trace/export_simgrid.hpp"
#include "trace/output_directory.hpp"
#include "trace/reader.hpp"
#include "trace/summary.hpp"
#include "trace/writer.hpp"

namespace commgauge::cli {

namespace fs = std::filesystem;

namespace {

/// The MPI library a traced program runs on: each has its own tracer (the MPI ABIs differ) and
/// its own launcher flags.
enum class MpiFlavour { open_mpi, mpich };

const char* tracer_file_name(MpiFlavour mpi) {
  return mpi == MpiFlavour::mpich ? "libcommgauge-tracer-mpich.so" : "libcommgauge-tracer.so";
}

/// The tracer library: --tracer, $COMMGAUGE_TRACER ($COMMGAUGE_TRACER_MPICH for MPICH), where
/// `cmake --install` puts it relative to this binary (so an installed prefix can be moved), next
/// to it, or - only for the binary in the build tree - where the build put it.
std::string find_tracer(const std::string& given, MpiFlavour mpi) {
  std::vector<fs::path> candidates;
  if (!given.empty()) {
    if (!fs::exists(given)) throw InputError("--tracer", given + ": no such file");
    return fs::absolute(given).string();
  }
  const bool mpich = mpi == MpiFlavour::mpich;
  if (const char* env = std::getenv(mpich ? "COMMGAUGE_TRACER_MPICH" : "COMMGAUGE_TRACER"))
    candidates.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
#ifdef COMMGAUGE_TRACER_FROM_BINDIR
    candidates.push_back(
        (exe.parent_path() / COMMGAUGE_TRACER_FROM_BINDIR).replace_filename(tracer_file_name(mpi)));
#endif
    candidates.push_back(exe.parent_path() / tracer_file_name(mpi));
#ifdef COMMGAUGE_BUILD_BINARY_DIR
    if (fs::equivalent(exe.parent_path(), COMMGAUGE_BUILD_BINARY_DIR, ec)) {
#ifdef COMMGAUGE_TRACER_BUILD_PATH
      if (!mpich) candidates.emplace_back(COMMGAUGE_TRACER_BUILD_PATH);
#endif
#ifdef COMMGAUGE_TRACER_MPICH_BUILD_PATH
      if (mpich) candidates.emplace_back(COMMGAUGE_TRACER_MPICH_BUILD_PATH);
#endif
    }
#endif
  }
  for (const auto& c : candidates)
    if (fs::exists(c, ec)) return fs::canonical(c).string();
  if (mpich)
    throw InputError(
        "the MPICH tracer libcommgauge-tracer-mpich.so was not found (build commgauge with "
        "-DCOMMGAUGE_TRACER_MPICH=ON, or give its path with --tracer or "
        "$COMMGAUGE_TRACER_MPICH)");
  throw InputError(
      "the tracer library libcommgauge-tracer.so was not found (this commgauge was built "
      "without MPI, or give its path with --tracer or $COMMGAUGE_TRACER)");
}

/// How a launcher passes the tracer to the ranks only (never to itself or its daemons).
enum class LauncherKind { open_mpi, mpich_hydra, other };

/// Known by name, also behind symlinks (Debian's alternatives: mpirun -> mpirun.openmpi or
/// mpirun.mpich; MPICH's own install: mpiexec -> mpiexec.hydra). A plain mpirun/mpiexec that
/// resolves to nothing known is taken for Open MPI's.
LauncherKind launcher_kind(const std::string& program) {
  const auto kind_of = [](const std::string& base) {
    if (base == "mpirun.mpich" || base == "mpiexec.mpich" || base == "mpiexec.hydra" ||
        base == "mpirun.hydra")
      return LauncherKind::mpich_hydra;
    if (base == "mpirun" || base == "mpiexec" || base == "orterun" || base == "prterun" ||
        base == "mpirun.openmpi" || base == "mpiexec.openmpi")
      return LauncherKind::open_mpi;
    return LauncherKind::other;
  };
  fs::path path = program;
  if (program.find('/') == std::string::npos) {
    const char* env_path = std::getenv("PATH");
    std::string dirs = env_path ? env_path : "";
    for (std::size_t begin = 0; begin <= dirs.size();) {
      const std::size_t end = std::min(dirs.find(':', begin), dirs.size());
      const fs::path candidate = fs::path(dirs.substr(begin, end - begin)) / program;
      if (::access(candidate.c_str(), X_OK) == 0) {
        path = candidate;
        break;
      }
      begin = end + 1;
    }
  }
  std::error_code ec;
  const fs::path resolved = fs::canonical(path, ec);
  if (!ec) {
    const LauncherKind kind = kind_of(resolved.filename().string());
    if (kind != LauncherKind::other) return kind;
  }
  return kind_of(path.filename().string());
}

std::string join_command(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args)
    s += (s.empty() ? "" : " ") + a;
  return s;
}

/// Checks that this process can create files in `dir` (access() does not see a read-only mount).
void check_writable(const fs::path& dir) {
  const fs::path probe = dir / ".commgauge-write-test";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw InputError("-o", dir.string() + " is not writable: " + std::strerror(errno));
  ::close(fd);
  fs::remove(probe);
}

/// After a run that did not reach MPI_Finalize: an index.json rebuilt from the rank headers.
void write_rebuilt_index(const fs::path& dir, const trace::TraceReader& trace) {
  nlohmann::json index = trace.index();
  index["rebuilt"] = true;
  index["finished"] = false;
  index["complete"] = false;
  profile::write_json_file(dir / "index.json", index);
}

/// `check_first` sees the summary before anything is printed or written (a refusal writes nothing).
trace::TraceSummary print_summary(
    const trace::TraceReader& trace, const std::string& json_path, std::size_t top,
    const std::string& tables_csv_path,
    const std::function<void(const trace::TraceSummary&)>& check_first = nullptr) {
  trace::TraceSummary summary = trace::summarize(trace, top);
  if (check_first) check_first(summary);
  trace::resolve_call_sites(summary);
  report::TableSink tables;
  std::fputs(report::trace_summary_text(summary, 64, &tables).c_str(), stdout);
  if (!json_path.empty()) profile::write_json_file(json_path, report::trace_summary_json(summary));
  if (!tables_csv_path.empty()) write_text_file(tables_csv_path, tables.csv());
  return summary;
}

}  // namespace

void add_trace_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "trace",
      "Run an MPI program under the commgauge tracer (PMPI, loaded with LD_PRELOAD: no "
      "relinking) and print an mpiP-style summary. Example: commgauge trace -o DIR -- mpirun -np "
      "4 ./app args. With Open MPI's mpirun/mpiexec the tracer reaches the ranks through "
      "'-x LD_PRELOAD=...', with MPICH's (Hydra: mpiexec.mpich, mpiexec.hydra) through "
      "'-genv LD_PRELOAD ...'; with another launcher (srun...) it is exported in the "
      "environment the launcher passes on (--mpi mpich for an MPICH program there).");
  struct Flags {
    std::string dir;
    bool force = false;
    std::string json, tables_csv;
    std::string tracer;
    std::size_t top = 10;
    bool cpu_time = false;
    std::string clock = "auto";
    std::string mpi = "auto";
    double timeout_s = 0;
    std::vector<std::string> command;
  };
  auto flags = std::make_shared<Flags>();
  cmd->add_option("-o,--output", flags->dir, "trace directory (created; must be empty)")
      ->required();
  cmd->add_flag("--force", flags->force, "replace a previous trace in the directory");
  cmd->add_option("--json", flags->json, "write the summary as JSON to this file");
  add_tables_csv_option(*cmd, flags->tables_csv, "Options");
  cmd->add_option("--tracer", flags->tracer,
                  "path of the tracer library (default: libcommgauge-tracer.so, or "
                  "libcommgauge-tracer-mpich.so for MPICH, found next to commgauge)");
  cmd->add_option("--mpi", flags->mpi,
                  "the MPI library the program was built with, which picks the tracer: auto "
                  "(MPICH under MPICH's mpiexec/Hydra, else Open MPI), openmpi or mpich")
      ->check(CLI::IsMember({"auto", "openmpi", "mpich"}))
      ->capture_default_str();
  cmd->add_option("--top", flags->top, "largest messages listed")->capture_default_str();
  cmd->add_flag("--cpu-time", flags->cpu_time,
                "also record each thread's CPU time at every event (shows oversubscription)");
  cmd->add_option("--clock", flags->clock,
                  "auto (invariant TSC where available, else CLOCK_MONOTONIC) or monotonic")
      ->check(CLI::IsMember({"auto", "monotonic"}))
      ->capture_default_str();
  cmd->add_option("--timeout", flags->timeout_s,
                  "kill the command after this many seconds (0: no limit); at most 1e6")
      ->check(within(0, kMaxTimeLimit_s))
      ->capture_default_str();
  cmd->add_option("command", flags->command, "the command to trace, after --")->required();
  cmd->callback([&action, flags] {
    action = [flags](int&, char**&) {
      const LauncherKind launcher = launcher_kind(flags->command.front());
      const MpiFlavour mpi =
          flags->mpi == "mpich" || (flags->mpi == "auto" && launcher == LauncherKind::mpich_hydra)
              ? MpiFlavour::mpich
              : MpiFlavour::open_mpi;
      const std::string tracer = find_tracer(flags->tracer, mpi);
      const fs::path final_dir = fs::absolute(flags->dir);
      // With --force the old trace stays until the new one exists (OutputDirectory::commit).
      trace::OutputDirectory output(final_dir, flags->force);
      const fs::path recording = output.recording_dir();
      check_writable(recording);
      std::vector<std::string> env = {"COMMGAUGE_TRACE_DIR=" + recording.string(),
                                      "COMMGAUGE_TRACE_COMMAND=" + join_command(flags->command)};
      if (flags->cpu_time) env.push_back("COMMGAUGE_TRACE_CPU=1");
      if (flags->clock == "monotonic") env.push_back("COMMGAUGE_TRACE_CLOCK=monotonic");
      std::vector<std::string> command = flags->command;
      double launcher_kill_wait_s = 10;  // how long mpirun waits after SIGTERM before SIGKILL
      if (launcher == LauncherKind::mpich_hydra) {
        // Hydra passes -genv variables to the ranks only.
        std::vector<std::string> exports = {"-genv", "LD_PRELOAD", tracer};
        for (const auto& kv : env) {
          const std::size_t eq = kv.find('=');
          exports.insert(exports.end(), {"-genv", kv.substr(0, eq), kv.substr(eq + 1)});
        }
        command.insert(command.begin() + 1, exports.begin(), exports.end());
      } else if (launcher == LauncherKind::open_mpi) {
        // Only the ranks load the tracer, never mpirun or its daemons.
        std::vector<std::string> exports = {"-x", "LD_PRELOAD=" + tracer};
        for (const auto& kv : env) {
          exports.push_back("-x");
          exports.push_back(kv);
        }
        // On SIGTERM mpirun sends SIGKILL after odls_base_sigkill_timeout (1 s by default): on a
        // loaded machine a rank's handler may not have written its last block by then.
        const auto given = std::find(command.begin(), command.end(), "odls_base_sigkill_timeout");
        if (given == command.end()) {
          exports.insert(exports.end(), {"--mca", "odls_base_sigkill_timeout",
                                         fmt::format("{:g}", launcher_kill_wait_s)});
        } else if (given + 1 != command.end()) {
          launcher_kill_wait_s = std::atof((given + 1)->c_str());
        }
        command.insert(command.begin() + 1, exports.begin(), exports.end());
      } else {
        env.push_back("LD_PRELOAD=" + tracer);
      }
      std::fprintf(stderr, "commgauge trace: recording into %s with the tracer %s\n",
                   final_dir.c_str(), tracer.c_str());
      std::fflush(stderr);
      const double limit_s = flags->timeout_s;
      // After --timeout's SIGTERM the job gets longer than mpirun's own wait before SIGKILL:
      // killing it at 5 s lost every rank's last block (572 of 602 events).
      ChildJob job{command,
                   env,
                   limit_s,
                   [limit_s] {
                     std::fprintf(stderr,
                                  "commgauge trace: the command ran past --timeout %g s; ending "
                                  "it\n",
                                  limit_s);
                   },
                   std::max(launcher_kill_wait_s, 0.0) + 5,
                   nullptr};
      if (launcher == LauncherKind::mpich_hydra) {
        // Hydra kills the ranks right after passing a SIGTERM on, before a busy rank's handler
        // has written its last block (20 of 603 records lost in 2 of 3 runs under load): the
        // ranks on this host get the signal first, with Hydra stopped until they have ended.
        job.end_first = [entries = std::vector<std::string>{
                             "LD_PRELOAD=" + tracer, "COMMGAUGE_TRACE_DIR=" + recording.string()}] {
          return processes_with_environment(entries);
        };
      }
      const int status = run_child_job(job);
      std::error_code ec;
      const bool any_rank = fs::exists(recording / trace::rank_file_name(0), ec) ||
                            fs::exists(recording / "index.json", ec);
      if (!any_rank) {
        throw InputError(fmt::format(
            "the command exited with status {} and no rank was traced (is it an MPI program? "
            "did it call MPI_Init?)",
            status));
      }
      output.commit();
      const fs::path& dir = final_dir;  // the trace's files are there now
      trace::TraceReader trace(dir);
      if (trace.index_rebuilt()) {
        warn(fmt::format(
            "commgauge trace: no index.json was written (the run did not reach MPI_Finalize, "
            "exit status {}, or the disk was full): rebuilt from the rank files\n",
            status));
        try {
          write_rebuilt_index(dir, trace);
        } catch (const std::runtime_error& error) {  // InputError, OutputError (a full disk)
          warn(fmt::format("commgauge trace: {}\n", error.what()));
        }
      }
      print_summary(trace, flags->json, flags->top, flags->tables_csv);
      if (status != 0)
        warn(fmt::format("commgauge trace: the traced command exited with status {}\n", status));
      return status;
    };
  });
}

void add_trace_summary_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "trace-summary", "Print the mpiP-style summary of a recorded trace (as `trace` does).");
  struct Flags {
    std::string dir;
    std::string json;
    std::string csv, tables_csv;
    std::string plot;
    std::size_t top = 10;
  };
  auto flags = std::make_shared<Flags>();
  cmd->add_option("trace", flags->dir, "trace directory or container file")->required();
  cmd->add_option("--json", flags->json, "write the summary as JSON to this file");
  cmd->add_option("--csv", flags->csv,
                  "write the communication matrix (point-to-point sends) as CSV: from,to,"
                  "messages,bytes per pair of world ranks that exchanged anything");
  add_tables_csv_option(*cmd, flags->tables_csv, "Options");
  cmd->add_option("--plot", flags->plot,
                  "draw the communication matrix as a heatmap of bytes sent (.png or .svg)");
  cmd->add_option("--top", flags->top, "largest messages listed")->capture_default_str();
  cmd->callback([&action, flags] {
    action = [flags](int&, char**&) {
      const trace::TraceReader trace = open_trace(flags->dir);
      const trace::TraceSummary summary = print_summary(
          trace, flags->json, flags->top, flags->tables_csv,
          [&plot = flags->plot](const trace::TraceSummary& s) {
            if (!plot.empty() && !report::has_traffic(s))
              throw InputError("--plot", "the trace has no point-to-point send to draw");
          });
      if (!flags->csv.empty()) write_text_file(flags->csv, report::traffic_csv(summary));
      if (!flags->plot.empty())
        report::plot_traffic(flags->plot, summary,
                             fmt::format("point-to-point bytes sent, {} ranks", summary.ranks));
      return 0;
    };
  });
}

void add_trace_dump_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "trace-dump",
      "Print a trace's events as text, one per line: start on rank 0's clock (seconds since "
      "rank 0's MPI_Init), duration, function and arguments.");
  struct Flags {
    std::string dir;
    std::vector<std::uint32_t> ranks;
    std::uint64_t limit = 0;
    bool header = false;
  };
  auto flags = std::make_shared<Flags>();
  cmd->add_option("trace", flags->dir, "trace directory or container file")->required();
  cmd->add_option("--rank", flags->ranks, "only these ranks (default: all)");
  cmd->add_option("--limit", flags->limit, "at most this many events per rank (0: all)");
  cmd->add_flag("--header", flags->header, "print each rank's header (JSON) first");
  cmd->callback([&action, flags] {
    action = [flags](int&, char**&) {
      const trace::TraceReader trace = open_trace(flags->dir);
      std::vector<std::uint32_t> ranks = flags->ranks;
      if (ranks.empty())
        for (std::uint32_t r = 0; r < trace.ranks(); ++r)
          ranks.push_back(r);
      // The origin: rank 0's clock at its MPI_Init clock synchronisation.
      double origin_ns = 0;
      {
        trace::RankReader r0 = trace.open_rank(0);
        const trace::ClockMap map0 = trace::clock_map(trace, r0);
        trace::Event first;
        if (r0.next(first)) origin_ns = map0.root_ns(first.end_tick);
      }
      trace::Event e;
      for (std::uint32_t r : ranks) {
        trace::RankReader reader = trace.open_rank(r);
        const trace::ClockMap map = trace::clock_map(trace, reader);
        std::printf("# rank %u (%s)\n", r, reader.file_name().c_str());
        if (flags->header) std::printf("# header %s\n", json_text(reader.header()).c_str());
        while ((flags->limit == 0 || reader.event_count() < flags->limit) && reader.next(e)) {
          std::printf("%u #%-6llu %s\n", r,
                      static_cast<unsigned long long>(reader.event_count() - 1),
                      report::event_text(e, (map.root_ns(e.start_tick) - origin_ns) * 1e-9,
                                         map.duration_ns(1))
                          .c_str());
        }
        if (reader.end() == trace::RankEnd::truncated)
          std::printf("# rank %u TRUNCATED: its data ends without an end record\n", r);
      }
      return 0;
    };
  });
}

}  // namespace commgauge::cli

namespace commgauge::cli {

void add_trace_check_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "trace-check",
      "Validate a trace: all ranks present and readable (version, block checksums), every rank "
      "finished, every send matched by a receive under MPI's matching rules (communicator, "
      "source, tag, order) with agreeing sizes, every request completed, collectives alike on "
      "every member, communicator ids agreeing. A receive ending before its send starts (after "
      "clock mapping) is a warning. Exit status 1 if there are errors.");
  struct Flags {
    std::string dir;
    std::string json;
    std::size_t max_issues = 50;
  };
  auto flags = std::make_shared<Flags>();
  cmd->add_option("trace", flags->dir, "trace directory or container file")->required();
  cmd->add_option("--json", flags->json, "write the result as JSON to this file");
  cmd->add_option("--max-issues", flags->max_issues, "issues listed (all are counted)")
      ->capture_default_str();
  cmd->callback([&action, flags] {
    action = [flags](int&, char**&) {
      const trace::TraceReader trace = open_trace(flags->dir);
      const trace::CheckResult r = trace::check_trace(trace, flags->max_issues);
      nlohmann::json issues = nlohmann::json::array();
      for (const auto& i : r.issues) {
        issues.push_back(
            {{"severity", i.severity == trace::CheckIssue::Severity::error ? "error" : "warning"},
             {"rank", i.rank},
             {"event", i.event},
             {"message", i.message}});
      }
      std::fputs(trace::check_report(r, trace.ranks()).c_str(), stdout);
      if (!flags->json.empty())
        profile::write_json_file(flags->json, {{"ok", r.ok()},
                                               {"ranks", trace.ranks()},
                                               {"events", r.events},
                                               {"messages_matched", r.messages_matched},
                                               {"requests_completed", r.requests_completed},
                                               {"collectives_checked", r.collectives_checked},
                                               {"communicators", r.communicators},
                                               {"errors", r.errors},
                                               {"warnings", r.warnings},
                                               {"issues", issues}});
      return r.ok() ? 0 : 1;
    };
  });
}

}  // namespace commgauge::cli

namespace commgauge::cli {

void add_trace_export_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "trace-export",
      "Export a trace to another tool's format. simgrid-ti: SimGrid 3.32's time-independent "
      "format, replayed by: smpirun -np N -platform OUT/platform.xml -hostfile OUT/hostfile.txt "
      "-replay OUT/trace.txt. Computation becomes flops at --host-speed; collectives on "
      "sub-communicators are lowered to point-to-point with commgauge's algorithms. otf2: an "
      "OTF2 archive OUT/traces.otf2 as Score-P writes it (read by otf2-print, Vampir, "
      "python3-otf2): every call as a region, its messages and collectives, the communicators.");
  struct Flags {
    std::string format = "simgrid-ti";
    std::string dir;
    std::string out;
    double host_speed = 1e9;
    double bandwidth = 1.25e9;
    double latency = 1e-6;
    std::vector<std::string> algorithms;
    bool no_check = false;
    bool force = false;
  };
  auto flags = std::make_shared<Flags>();
  add_no_check_flag(*cmd, flags->no_check);
  cmd->add_flag("--force", flags->force,
                "write into an output directory that is not empty (the export's files in it are "
                "replaced; nothing else is removed)");
  cmd->add_option("--format", flags->format, "output format")
      ->check(CLI::IsMember({"simgrid-ti", "otf2"}))
      ->capture_default_str();
  cmd->add_option("trace", flags->dir, "trace directory or container file")->required();
  cmd->add_option("out", flags->out, "output directory (created)")->required();
  // Bounded so that SimGrid's figures stay finite and printable (1e308 wrote "inf" flops, 1e-300
  // a speed of "0f").
  cmd->add_option("--host-speed", flags->host_speed,
                  "flops per second of each host (computation seconds x this = flops); 1 to 1e18")
      ->check(within(1, 1e18))
      ->capture_default_str();
  cmd->add_option("--bandwidth", flags->bandwidth, "link bandwidth in bytes per second; 1 to 1e18")
      ->check(within(1, 1e18))
      ->capture_default_str();
  cmd->add_option("--latency", flags->latency, "link latency in seconds; at most 1e6")
      ->check(within(0, kMaxTimeLimit_s))
      ->capture_default_str();
  cmd->add_option("--coll", flags->algorithms,
                  "algorithm for lowered collectives, OPERATION=ALGORITHM (e.g. "
                  "allreduce=ring, bcast=linear); repeatable")
      ->delimiter(',');
  cmd->callback([&action, flags] {
    action = [flags](int&, char**&) {
      trace::SimgridExportOptions options;
      options.host_speed_flops = flags->host_speed;
      options.bandwidth_bytes_per_s = flags->bandwidth;
      options.latency_s = flags->latency;
      for (const auto& spec : flags->algorithms) {
        const auto eq = spec.find('=');
        const auto op = collectives::parse_operation(spec.substr(0, eq));
        const auto algorithm = eq == std::string::npos
                                   ? std::nullopt
                                   : collectives::parse_algorithm(spec.substr(eq + 1));
        if (!op || !algorithm)
          throw InputError("--coll", "expected OPERATION=ALGORITHM, got \"" + spec + "\"");
        const auto allowed = collectives::algorithms_for(*op);
        if (std::find(allowed.begin(), allowed.end(), *algorithm) == allowed.end())
          throw InputError("--coll", "no " + std::string(collectives::to_string(*algorithm)) +
                                         " algorithm for " +
                                         std::string(collectives::to_string(*op)));
        options.algorithms[*op] = *algorithm;
      }
      {
        // A directory that holds files already (the user's, or an earlier export) is written
        // into only with --force: its trace.txt, platform.xml, ... would be replaced.
        namespace fs = std::filesystem;
        std::error_code ec;
        const fs::path out(flags->out);
        if (fs::exists(out, ec) && !fs::is_directory(out, ec))
          throw InputError("out", flags->out + " exists and is not a directory");
        if (!flags->force && fs::is_directory(out, ec) && !fs::is_empty(out, ec)) {
          throw InputError("out",
                           flags->out + " is not empty (give --force to write the export into it)");
        }
      }
      const trace::TraceReader trace = open_trace(flags->dir);
      if (!trace_passes_check(trace, flags->no_check)) return 1;
      if (flags->format == "otf2") {
        const auto r = trace::export_otf2(trace, flags->out, flags->force);
        std::printf(
            "trace-export: %u ranks, %llu locations, %llu OTF2 events (%llu MPI calls, %llu "
            "messages, %llu collectives, %llu communicators)\n",
            r.ranks, static_cast<unsigned long long>(r.locations),
            static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.calls),
            static_cast<unsigned long long>(r.messages),
            static_cast<unsigned long long>(r.collectives),
            static_cast<unsigned long long>(r.communicators));
        for (const auto& n : r.notes)
          std::printf("note: %s\n", n.c_str());
        std::printf("archive: %s/traces.otf2 (otf2-print %s/traces.otf2)\n", flags->out.c_str(),
                    flags->out.c_str());
        return 0;
      }
      const auto r = trace::export_simgrid_ti(trace, flags->out, options);
      std::printf(
          "trace-export: %u ranks on %llu hosts, %llu actions (%llu messages, %llu collectives "
          "as SimGrid actions, %llu lowered to point-to-point), %.6f s of computation\n",
          r.ranks, static_cast<unsigned long long>(r.hosts),
          static_cast<unsigned long long>(r.actions), static_cast<unsigned long long>(r.messages),
          static_cast<unsigned long long>(r.world_collectives),
          static_cast<unsigned long long>(r.lowered_collectives), r.compute_seconds);
      for (const auto& n : r.notes)
        std::printf("note: %s\n", n.c_str());
      std::printf(
          "replay: smpirun -np %u -platform %s/platform.xml -hostfile %s/hostfile.txt "
          "-replay %s/trace.txt\n",
          r.ranks, flags->out.c_str(), flags->out.c_str(), flags->out.c_str());
      return 0;
    };
  });
}

}  // namespace commgauge::cli
