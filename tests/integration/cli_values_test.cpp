// Every value of every flag of every command is checked before any work starts: read from each
// command's own --help, so a flag added later is covered without editing this test.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "process.hpp"

namespace commgauge::testing {
namespace {

using ::testing::HasSubstr;

struct Flag {
  std::vector<std::string> command;  // the subcommand's path: {"loggp"}, {"predict", "pingpong"}
  std::string name, type;
  std::string where() const {
    std::string out;
    for (const auto& c : command)
      out += c + " ";
    return out + name;
  }
};

// The subcommands listed under "Subcommands:" in a help text.
std::vector<std::string> subcommands_in(const std::string& help) {
  std::istringstream lines(help);
  std::vector<std::string> out;
  bool in_subcommands = false;
  const std::regex command_line(R"(^  ([a-z][a-z-]*)\s{2,})");
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("Subcommands:", 0) == 0) in_subcommands = true;
    std::smatch m;
    if (in_subcommands && std::regex_search(line, m, command_line)) out.push_back(m[1]);
  }
  return out;
}

// The subcommands in `commgauge --help` (and theirs, as predict's scenarios), and the flags with
// a value in each one's --help.
std::vector<Flag> every_flag() {
  std::vector<Flag> flags;
  std::vector<std::vector<std::string>> pending;
  for (const auto& c : subcommands_in(run({commgauge(), "--help"}).out))
    pending.push_back({c});
  const std::regex flag_line(R"(^\s+(?:-\w,)?(--[a-z][a-z-]*)\s+(FLOAT|INT|UINT|TEXT)\b)");
  while (!pending.empty()) {
    const auto command = pending.back();
    pending.pop_back();
    std::vector<std::string> argv = {commgauge()};
    argv.insert(argv.end(), command.begin(), command.end());
    argv.push_back("--help");
    const Outcome help = run(argv);
    for (const auto& sub : subcommands_in(help.out)) {
      pending.push_back(command);
      pending.back().push_back(sub);
    }
    std::istringstream text(help.out);
    for (std::string line; std::getline(text, line);) {
      std::smatch m;
      if (std::regex_search(line, m, flag_line)) flags.push_back({command, m[1], m[2]});
    }
  }
  return flags;
}

TEST(CliValues, NoNumericFlagTakesNanOrInfinityAndNoValueIsEmpty) {
  const auto flags = every_flag();
  // The commands and their flags are there (a broken --help would make this test vacuous).
  ASSERT_GE(flags.size(), 100u);
  std::size_t numeric = 0;
  for (const auto& f : flags) {
    const bool is_number = f.type != "TEXT";
    numeric += is_number ? 1 : 0;
    // Each bad value with what the refusal says. An empty value: refused as empty, or as not one
    // of the allowed words. An unsigned flag never wraps a negative number or one above 2^64 - 1.
    std::vector<std::pair<std::string, std::string>> bad;
    if (is_number) {
      for (const char* v : {"nan", "inf", "-inf", "1e999"})
        bad.emplace_back(v, "finite");
      bad.emplace_back("", "must not be empty|finite number");
    } else {
      bad.emplace_back("", "must not be empty|not in \\{|expected");
    }
    if (f.type == "UINT") {
      // A flag with a stated range may say that range instead.
      bad.emplace_back("-1", "whole number >= 0|a finite number from");
      bad.emplace_back("18446744073709551616", "out of range|a finite number from");
    }
    for (const auto& [value, says] : bad) {
      std::vector<std::string> argv = {commgauge()};
      argv.insert(argv.end(), f.command.begin(), f.command.end());
      argv.insert(argv.end(), {f.name, value});
      // predict's scenarios check their required options first: given, unless under test.
      if (f.command.front() == "predict") {
        if (f.name != "--profile")
          argv.insert(argv.end(), {"--profile", std::string(COMMGAUGE_SOURCE_DIR) +
                                                    "/examples/networks/loggp-simple.json"});
        if (f.command.back() == "isend-compute-wait" && f.name != "--comp-us")
          argv.insert(argv.end(), {"--comp-us", "10"});
      }
      const Outcome o = run(argv);
      EXPECT_EQ(o.exit_code, 2) << f.where() << " '" << value << "': " << o.err;
      EXPECT_THAT(o.err, HasSubstr(f.name)) << f.where() << " '" << value << "'";
      EXPECT_THAT(o.err, ::testing::ContainsRegex(says)) << f.where() << " '" << value << "'";
    }
  }
  EXPECT_GE(numeric, 40u);
}

TEST(CliValues, BoundedWorkIsStatedAndEnforced) {
  // Each limit named in --help, and a value past it refused before anything runs.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"overlap", "--points-per-octave=1e9"},
      {"loggp", "--points-per-octave=65"},
      {"overlap", "--min-comp=1e300"},
      {"overlap", "--comp-us=1e9"},
      {"timer", "--max-bins=2000000000"},
      {"synth", "--ranks=5000000"},
      // Found by a red-team run: both reached the analysis and ended in exit 1.
      {"loggp", "--delay=1e308"},
      {"timer", "--max-frequency-rows=0"},
      {"predict", "--sizes=1:1000000:1.0000000001"},
  };
  const std::string link =
      std::string(COMMGAUGE_SOURCE_DIR) + "/examples/networks/loggp-simple.json";
  for (const auto& [command, flag_value] : cases) {
    const std::string flag = flag_value.substr(0, flag_value.find('='));
    // synth's other required values are given (its output is never written: refused first).
    std::vector<std::string> argv = {commgauge(), command, flag_value};
    if (command == "predict") {
      // predict's flags belong to its scenario: pingpong, from a link-parameter file.
      argv = {
          commgauge(), command,
          "pingpong",  flag_value,
          "--profile", std::string(COMMGAUGE_SOURCE_DIR) + "/examples/networks/loggp-simple.json"};
    } else if (command == "synth") {
      argv.insert(argv.end(), {"ring", "-o", "/nonexistent/never-written"});
    } else {
      argv.insert(argv.end(), {"--transport", "virtual", "--virtual-net", link});
    }
    const Outcome o = run(argv, std::chrono::seconds(30));
    EXPECT_EQ(o.exit_code, 2) << command << " " << flag_value << ": " << o.err;
    EXPECT_THAT(o.err, HasSubstr(flag));
    const Outcome help = command == "predict" ? run({commgauge(), command, "pingpong", "--help"})
                                              : run({commgauge(), command, "--help"});
    const std::size_t at = help.out.find("  " + flag + " ");
    ASSERT_NE(at, std::string::npos) << command << " --help has no " << flag;
    const std::string entry = help.out.substr(at, help.out.find("\n  --", at + 1) - at);
    EXPECT_THAT(entry, ::testing::ContainsRegex("at most|1 to [0-9]"))
        << command << " --help does not state the limit of " << flag << ": " << entry;
  }
  // A rule, not only finiteness: simulate's --compute-scale must be positive.
  const Outcome o = run({commgauge(), "simulate", "x", "--compute-scale", "-1"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_THAT(o.err, HasSubstr("--compute-scale: must be a finite number > 0"));
  // overlap's --comp-us: -1 meant "C of each size" inside and passed as a value (red-team,
  // 2026-12-05); a size range's factor must be finite (inf gave the first size alone).
  const Outcome comp =
      run({commgauge(), "overlap", "--transport", "virtual", "--virtual-net",
           std::string(COMMGAUGE_SOURCE_DIR) + "/examples/networks/loggp-simple.json", "--sizes",
           "8", "--comp-us", "-1"});
  EXPECT_EQ(comp.exit_code, 2);
  EXPECT_THAT(comp.err, HasSubstr("--comp-us: must be a finite number >= 0"));
  const Outcome factor =
      run({commgauge(), "predict", "pingpong", "--profile",
           std::string(COMMGAUGE_SOURCE_DIR) + "/examples/networks/loggp-simple.json", "--sizes",
           "8:1KiB:inf"});
  EXPECT_EQ(factor.exit_code, 2);
  EXPECT_THAT(factor.err, HasSubstr("the factor must be a finite number > 1"));
  // Ranges that keep what a command writes finite (red-team, 2026-12-05: trace-export wrote "inf"
  // flops for --host-speed 1e308 and "0Bps" for --bandwidth 1e-300; trace --timeout -1 ran).
  const std::string ring = (scratch_file("values-ring")).string();
  ASSERT_EQ(run({commgauge(), "synth", "ring", "--ranks", "2", "-o", ring}).exit_code, 0);
  const std::vector<std::vector<std::string>> ranges = {
      {"trace-export", ring, ring + "-ex", "--host-speed", "1e308", "from 1 to 1e+18"},
      {"trace-export", ring, ring + "-ex", "--bandwidth", "1e-300", "from 1 to 1e+18"},
      {"trace-export", ring, ring + "-ex", "--latency", "1e300", "from 0 to 1e+06"},
      {"trace", "-o", ring + "-t", "--timeout", "-1", "--", "true", "from 0 to 1e+06"}};
  for (const auto& args : ranges) {
    std::vector<std::string> argv = {commgauge()};
    argv.insert(argv.end(), args.begin(), args.end() - 1);
    const Outcome r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_THAT(r.err, HasSubstr("must be a finite number " + args.back())) << r.err;
  }
  const Outcome seed =
      run({commgauge(), "simulate", ring, "--profile",
           std::string(COMMGAUGE_SOURCE_DIR) + "/examples/networks/loggp-simple.json",
           "--placement", "random:-1"});
  EXPECT_EQ(seed.exit_code, 2);
  EXPECT_THAT(seed.err, HasSubstr("expected random:SEED with a whole number SEED >= 0"));
  // TCP time limits: a deadline is the clock plus the limit (9.3e9 s overflowed it: a connect
  // gave up at once, exit 3; 1e308 s became a negative wait); 0 and -1 are no limits either.
  const std::vector<std::vector<std::string>> limits = {
      {"latency", "--transport", "tcp", "--connect-timeout", "9.3e9"},
      {"latency", "--transport", "tcp", "--io-timeout", "-1"},
      {"serve", "--bind", "127.0.0.1", "--once", "--io-timeout", "1e308"},
      {"serve", "--bind", "127.0.0.1", "--once", "--accept-timeout", "0"},
      {"share", "--scheme", std::string(COMMGAUGE_SOURCE_DIR) + "/examples/schemes/fig2-1.sch",
       "--transport", "tcp", "--io-timeout", "0"},
      {"share", "--scheme", std::string(COMMGAUGE_SOURCE_DIR) + "/examples/schemes/fig2-1.sch",
       "--transport", "tcp", "--connect-timeout", "1e10"}};
  for (const auto& args : limits) {
    std::vector<std::string> argv = {commgauge()};
    argv.insert(argv.end(), args.begin(), args.end());
    const Outcome t = run(argv);
    EXPECT_EQ(t.exit_code, 2) << args[0] << " " << args[args.size() - 2];
    EXPECT_THAT(t.err,
                HasSubstr(args[args.size() - 2] + ": must be a finite number of seconds from 0.001 "
                                                  "to 1e6"));
  }
}

// A result file that cannot be written is refused when the command line is read, before any
// measuring (red-team, 2026-12-05: loggp, overlap, latency, timer, simulate and predict measured
// or replayed first and failed on --plot x.txt or --json in a missing directory at the end).
TEST(CliValues, ResultFilesAreCheckedBeforeAnyWork) {
  std::size_t outputs = 0;
  for (const auto& f : every_flag()) {
    if (f.name != "--json" && f.name != "--csv" && f.name != "--tables-csv" && f.name != "--plot" &&
        f.name != "--timeline")
      continue;
    ++outputs;
    const std::string file = f.name == "--plot" ? "x.png" : "x.out";
    const std::string directory = (scratch_file("result-dir") / file).string();
    std::filesystem::create_directories(directory);
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"/nonexistent-commgauge-dir/" + file,
         "the directory \"/nonexistent-commgauge-dir\" does not exist"},
        {directory, "\"" + directory + "\" is a directory"}};
    for (const auto& [value, says] : bad) {
      std::vector<std::string> argv = {commgauge()};
      argv.insert(argv.end(), f.command.begin(), f.command.end());
      argv.insert(argv.end(), {f.name, value});
      const Outcome o = run(argv);
      EXPECT_EQ(o.exit_code, 2) << f.where() << " " << value << ": " << o.err;
      EXPECT_THAT(o.err, HasSubstr(f.name + ": " + says)) << f.where();
    }
    if (f.name == "--plot") {
      std::vector<std::string> argv = {commgauge()};
      argv.insert(argv.end(), f.command.begin(), f.command.end());
      argv.insert(argv.end(), {f.name, "plot.txt"});
      const Outcome o = run(argv);
      EXPECT_EQ(o.exit_code, 2) << f.where();
      EXPECT_THAT(o.err, HasSubstr("--plot: expected a .png or .svg file, got \"plot.txt\""));
    }
  }
  EXPECT_GE(outputs, 20u);
}

// Errors found below the command line name the flag the user typed, also where the field has
// another name (timer's --trials is timer_trials, profile's --latency-trials is trials).
TEST(CliValues, ErrorsNameTheFlagTheUserGave) {
  const std::vector<std::vector<std::string>> cases = {
      {"timer", "--trials", "0", "--trials: must be at least 1"},
      {"profile", "-o", "never-written.json", "--latency-trials", "0",
       "--latency-trials: must be at least 1"},
      {"profile", "-o", "never-written.json", "--max-size", "0",
       "--max-size: must be at least 1 B"},
      {"profile", "-o", "never-written.json", "--points-per-octave", "65",
       "--points-per-octave: must be > 0 and at most 64"}};
  for (const auto& args : cases) {
    std::vector<std::string> argv = {commgauge()};
    argv.insert(argv.end(), args.begin(), args.end() - 1);
    const Outcome o = run(argv);
    EXPECT_EQ(o.exit_code, 2) << args[0] << ": " << o.err;
    EXPECT_THAT(o.err, HasSubstr(args.back()));
  }
}

// The second red-team pass (2026-12-05): each input made a command run without end, exhaust
// memory, exit 1 with a library's words, or print a wrong number with exit 0. Each is now refused
// by name with exit 2, before any measuring.
TEST(CliValues, SecondRedTeamInputsAreRefusedByName) {
  namespace fs = std::filesystem;
  const std::string net =
      std::string(COMMGAUGE_SOURCE_DIR) + "/examples/networks/loggps-rendezvous.json";
  const std::string scheme = std::string(COMMGAUGE_SOURCE_DIR) + "/examples/schemes/fig2-1.sch";
  const fs::path dir = scratch_file("second-red-team");
  fs::create_directories(dir / "od" / "latency.trials.csv");
  {
    std::ifstream in(net);
    nlohmann::json doc = nlohmann::json::parse(in);
    doc["ranges"][0]["loggp_G_us_per_byte"] = 1e20;
    std::ofstream(dir / "huge-G.json") << doc.dump();
  }
  std::ofstream(dir / "subnormal.csv") << "size,one_way_us\n8,1e-320\n1KiB,7\n";
  std::ofstream(dir / "twice.csv") << "size,one_way_us\n8,1.5\n8,1.7\n";
  std::ofstream(dir / "share.json") << "{}";
  std::ofstream(dir / "latency.json")
      << R"({"method": "latency", "results": [{"size_bytes": 8, "stats_us": {"median": "7"}}]})";
  std::ofstream(dir / "latency-ci.json")
      << R"({"method": "latency", "results": [{"size_bytes": 8, "stats_us": {"median": 7},)"
      << R"( "median_ci95_us": [9, 1]}]})";
  std::ofstream(dir / "latency-size.json")
      << R"({"method": "latency", "results": [{"size_bytes": -1024, "stats_us": {"median": 7}}]})";
  const std::vector<std::vector<std::string>> cases = {
      {"latency", "--transport", "virtual", "--virtual-net", net, "--sizes", "8", "--output-dir",
       (dir / "od").string(), "latency.trials.csv\" is a directory"},
      {"latency", "--output-dir", "-", "--output-dir: standard output is not supported"},
      {"timer", "--bin-width", "1e-315", "--bin-width: must be 0 (automatic) or at least 1e-06"},
      {"latency", "--bin-width", "4.9e-324", "--bin-width: must be 0 (automatic) or at least"},
      {"latency", "--res-npp", "1e300", "--res-npp: must be above 0 and at most 1e+06"},
      {"latency", "--npp", "100001", "--npp: must be 1 to 100000"},
      {"latency", "--npp-init", "1000000", "--npp-init: must be 1 to 100000"},
      {"predict", "pingpong", "--profile", (dir / "huge-G.json").string(),
       "/ranges/0/loggp_G_us_per_byte: must be within [0, 1000000000], got 1e+20"},
      {"predict", "pingpong", "--profile", net, "--measured", (dir / "subnormal.csv").string(),
       "subnormal.csv:2: a measured time must be from 1e-06 to 1e+09 us"},
      {"predict", "pingpong", "--profile", net, "--measured", (dir / "latency.json").string(),
       "latency.json: /results/0/stats_us/median: expected a number"},
      {"predict", "pingpong", "--profile", net, "--measured", (dir / "latency-ci.json").string(),
       "the interval [9, 1] must hold the median 7"},
      {"predict", "pingpong", "--profile", net, "--measured", (dir / "latency-size.json").string(),
       "/results/0/size_bytes: expected a size in bytes"},
      {"share", "--scheme", scheme, "--predict", "--state-set-limit", "18446744073709551615",
       "--state-set-limit: must be a finite number from 1 to 1e+07"},
      {"share", "--scheme", scheme, "--mpi-timeout", "1e300",
       "--mpi-timeout: must be a finite number of seconds from 0.001 to 1e6"},
      {"latency", "--mpi-timeout", "1e-300", "--mpi-timeout: must be a finite number of seconds"},
      {"bogus", "unknown command \"bogus\" (commgauge --help lists them)"},
      {"synth", "ring", "--ranks", "4", "--compute-us", "1e10", "--iterations", "3", "-o",
       (dir / "never").string(), "--compute-us: 1e+10 us x 3 iterations exceeds 2.5 hours"},
      {"synth", "ring", "--ranks", "4", "--bytes", "17179869183GiB", "-o", (dir / "never").string(),
       "--bytes: \"17179869183GiB\" is more than 1e18 bytes"},
      {"synth", "ring", "--ranks", "2", "-o", "-", "-o: standard output is not supported"},
      {"predict", "pingpong", "--profile", net, "--measured", (dir / "twice.csv").string(),
       "twice.csv:3: size 8 B is given twice (first on line 2)"},
      {"share-fit", "--measured", (dir / "share.json").string(), "--measured",
       (dir / "share.json").string(), "share.json is given twice"},
      // Before connecting (a peer nobody listens on would have answered first, exit 3) and
      // long before the profile's end, where the class is used.
      {"profile", "-o", (dir / "p.json").string(), "--transport", "tcp", "--peer", "127.0.0.1:1",
       "--link-class", "bogus", "--link-class: bogus not in {auto,intra_node,inter_node}"}};
  for (const auto& args : cases) {
    std::vector<std::string> argv = {commgauge()};
    argv.insert(argv.end(), args.begin(), args.end() - 1);
    const Outcome o = run(argv);
    EXPECT_EQ(o.exit_code, 2) << args[0] << " " << args[1] << ": " << o.err;
    EXPECT_THAT(o.err, HasSubstr(args.back()));
  }
  EXPECT_FALSE(fs::exists(dir / "od" / "latency.output")) << "nothing measured, nothing written";
  // trace-summary refuses a plot of no sends before it writes its other outputs.
  ASSERT_EQ(run({commgauge(), "synth", "allreduce", "--ranks", "4", "-o", (dir / "ar").string()})
                .exit_code,
            0);
  std::ofstream(dir / "sum.json") << "OLD";
  const Outcome plot = run({commgauge(), "trace-summary", (dir / "ar").string(), "--json",
                            (dir / "sum.json").string(), "--csv", (dir / "pairs.csv").string(),
                            "--plot", (dir / "m.png").string()});
  EXPECT_EQ(plot.exit_code, 2);
  EXPECT_THAT(plot.err, HasSubstr("--plot: the trace has no point-to-point send to draw"));
  std::ifstream old_summary(dir / "sum.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(old_summary), {}), "OLD");
  EXPECT_FALSE(fs::exists(dir / "pairs.csv"));
  // A stream without end is refused once it passes what any input can be, not read into all of
  // memory (<(yes '[') reached 4 GB in 20 s).
  const Outcome endless =
      run({"bash", "-c", commgauge() + " predict pingpong --profile <(yes '[')"});
  EXPECT_EQ(endless.exit_code, 2);
  EXPECT_THAT(endless.err, HasSubstr("is larger than 256 MiB"));
}

TEST(CliValues, JsonToStandardOutputIsTheResultAloneAndEqualsTheFile) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("cg-json-stdout-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const Outcome piped = run({commgauge(), "synth", "ring", "--ranks", "3", "--iterations", "2",
                             "-o", (dir / "a").string(), "--json", "-"});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  const Outcome filed = run({commgauge(), "synth", "ring", "--ranks", "3", "--iterations", "2",
                             "-o", (dir / "b").string(), "--json", (dir / "b.json").string()});
  ASSERT_EQ(filed.exit_code, 0) << filed.err;
  // The whole of standard output is the document (the table went to standard error).
  const auto from_pipe = nlohmann::json::parse(piped.out);
  std::ifstream in(dir / "b.json");
  const auto from_file = nlohmann::json::parse(in);
  EXPECT_EQ(from_pipe["events"], from_file["events"]);
  EXPECT_EQ(from_pipe["ranks"], 3);
  EXPECT_THAT(piped.err, HasSubstr("commgauge synth: ring"));
  EXPECT_FALSE(fs::exists("-"));
  // Two results cannot share standard output (JSON and CSV ran together, exit 0), and an output
  // that cannot go there is refused rather than written to a file named "-".
  const std::string net = COMMGAUGE_SOURCE_DIR "/examples/networks/loggp-simple.json";
  Outcome o = run({commgauge(), "simulate", (dir / "b").string(), "--profile", net, "--json", "-",
                   "--tables-csv", "-"});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("--json and --tables-csv both write to standard output"));
  EXPECT_EQ(o.out, "");
  o = run({commgauge(), "simulate", (dir / "b").string(), "--profile", net, "--timeline", "-"});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("--timeline: standard output is not supported"));
  EXPECT_FALSE(fs::exists("-"));
  fs::remove_all(dir);
}

// Every table as CSV (--tables-csv): to standard output alone, also from a nested subcommand
// (predict pingpong), with each printed cell under its table, row and column.
TEST(CliValues, TablesCsvToStandardOutputHoldsEveryCellPrinted) {
  const std::string profile = COMMGAUGE_SOURCE_DIR "/examples/networks/loggps-rendezvous.json";
  const Outcome piped = run({commgauge(), "predict", "pingpong", "--profile", profile, "--sizes",
                             "8,100KiB", "--tables-csv", "-"});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_THAT(piped.err, HasSubstr("PREDICTED PING-PONG"));  // the table went to standard error
  std::istringstream lines(piped.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "table,row,column,value");
  std::map<std::string, std::string> cells;
  int count = 0;
  while (std::getline(lines, line)) {
    ++count;
    const auto last = line.rfind(',');
    ASSERT_NE(last, std::string::npos) << line;
    cells[line.substr(0, last)] = line.substr(last + 1);
  }
  EXPECT_EQ(count, 2 * 4);  // 2 sizes x (size_B and 3 models)
  EXPECT_EQ(cells["predicted_pingpong,1,size_B"], "102400");
  // The printed cell, as in the table on standard error.
  const std::string loggps = cells["predicted_pingpong,1,loggps_1way_us"];
  ASSERT_FALSE(loggps.empty());
  EXPECT_THAT(piped.err, HasSubstr(loggps));
  const Outcome json = run(
      {commgauge(), "predict", "pingpong", "--profile", profile, "--sizes", "8", "--json", "-"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["models"].size(), 3u);
}

// A plot's title carries what the user named (here a profile's path with a quote in it): quoted
// for gnuplot, so the picture is drawn and shows the name.
TEST(CliValues, APlotTitleWithAQuoteIsDrawn) {
  const auto profile = scratch_file("it's a profile.json");
  std::filesystem::copy_file(COMMGAUGE_SOURCE_DIR "/examples/networks/loggps-rendezvous.json",
                             profile, std::filesystem::copy_options::overwrite_existing);
  const auto svg = scratch_file("pingpong.svg");
  const Outcome o = run({commgauge(), "predict", "pingpong", "--profile", profile.string(),
                         "--sizes", "8,100KiB", "--plot", svg.string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::ifstream in(svg);
  const std::string picture((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(picture, HasSubstr("s a profile.json"));
}

// --model takes a list: those columns, in that order, each of which must apply. With all, a model
// that cannot model the link is left out with a warning, so the columns depend on the profile;
// a list keeps them fixed or says why it cannot.
TEST(CliValues, AModelListFixesPredictsColumnsOrRefusesAModelThatCannotApply) {
  namespace fs = std::filesystem;
  const std::string profile = COMMGAUGE_SOURCE_DIR "/examples/networks/loggps-rendezvous.json";
  const Outcome two = run({commgauge(), "predict", "pingpong", "--profile", profile, "--model",
                           "loggps,loggp", "--sizes", "8,100KiB", "--json", "-"});
  ASSERT_EQ(two.exit_code, 0) << two.err;
  const auto doc = nlohmann::json::parse(two.out);
  ASSERT_EQ(doc["models"].size(), 2u);
  EXPECT_EQ(doc["models"][0]["model"], "loggps");
  EXPECT_EQ(doc["models"][1]["model"], "loggp");
  // The same link with its rendezvous range measured as ICP with RAT: LogGPO has no formulas.
  auto link = nlohmann::json::parse(std::ifstream(profile));
  link["ranges"][1]["progress"] = "independent";
  link["ranges"][1]["Tm"] = "RAT";
  const fs::path file =
      fs::temp_directory_path() / ("cg-model-list-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << link.dump();
  const Outcome all = run({commgauge(), "predict", "pingpong", "--profile", file.string(),
                           "--sizes", "8", "--json", "-"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(nlohmann::json::parse(all.out)["models"].size(), 2u);
  EXPECT_THAT(all.err, HasSubstr("loggpo left out"));
  const Outcome named = run({commgauge(), "predict", "pingpong", "--profile", file.string(),
                             "--model", "loggp,loggpo", "--sizes", "8"});
  EXPECT_EQ(named.exit_code, 2);
  EXPECT_THAT(named.err, HasSubstr("--model"));
  EXPECT_THAT(named.err, HasSubstr("ICP"));
  EXPECT_EQ(
      run({commgauge(), "predict", "pingpong", "--profile", profile, "--model", "loggp,magic"})
          .exit_code,
      2);
  fs::remove(file);
}
TEST(CliValues, ExitCodesFollowTheReadmesTable) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("cg-exit-codes-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // 0: success.
  EXPECT_EQ(
      run({commgauge(), "synth", "ring", "--ranks", "2", "-o", (dir / "t").string()}).exit_code, 0);
  // 2: bad input, also a field of a parameter file out of its range.
  std::ofstream(dir / "gige.json") << R"({"beta": 1.1, "gamma_o": 7, "gamma_i": 0.036})";
  Outcome o = run({commgauge(), "share", "--predict", "--model", "gige", "--params",
                   (dir / "gige.json").string(), "--scheme",
                   std::string(COMMGAUGE_SOURCE_DIR) + "/examples/schemes/fig2-1.sch"});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("/gamma_o: must be a finite number in [0, 1], got 7"));
  // A negative gamma could drive a penalty to 0 or below (found by a red-team run: share printed
  // penalties of inf with gamma_o = -1e308).
  std::ofstream(dir / "gige.json", std::ios::trunc)
      << R"({"beta": 1.1, "gamma_o": -1e308, "gamma_i": 0.036})";
  o = run({commgauge(), "share", "--predict", "--model", "gige", "--params",
           (dir / "gige.json").string(), "--scheme",
           std::string(COMMGAUGE_SOURCE_DIR) + "/examples/schemes/fig4.sch"});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("/gamma_o: must be a finite number in [0, 1], got -1e+308"));
  // A beta so large that a shared transfer would pass the simulated clock (it once gave the
  // prediction without contention, exit 0) is refused where it is read: beta is bounded so that
  // beta times a node's degree stays a finite penalty (share had printed P = inf for 1e308).
  std::ofstream(dir / "gige.json", std::ios::trunc)
      << R"({"beta": 1e15, "gamma_o": 0.115, "gamma_i": 0.036})";
  ASSERT_EQ(run({commgauge(), "synth", "scheme",
                 std::string(COMMGAUGE_SOURCE_DIR) + "/examples/schemes/fig4.sch", "--ranks", "21",
                 "--ranks-per-node", "3", "-o", (dir / "fig4").string()})
                .exit_code,
            0);
  o = run({commgauge(), "simulate", (dir / "fig4").string(), "--profile",
           std::string(COMMGAUGE_SOURCE_DIR) + "/examples/networks/loggp-simple.json", "--model",
           "loggp", "--contention", "gige", "--gige-params", (dir / "gige.json").string()});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("/beta: must be a number in (0, 1e6], got 1000000000000000"));
  // 3: a timeout - serve with no client before --accept-timeout.
  o = run({commgauge(), "serve", "--bind", "127.0.0.1", "--port", "0", "--once", "--accept-timeout",
           "0.5"});
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_THAT(o.err, HasSubstr("no client connected within 0.5 s"));
  // 2, not 3: an address to listen on that does not exist or is not this host's is input, and
  // so is a descriptor to announce the port on that is not open (it was accepted, and the port
  // written nowhere). No packet leaves: each fails before or at bind(2). ::1 is not this host's
  // inside a network namespace of the run's own (unshare -n, gone when it ends) whose loopback
  // is down.
  o = run({commgauge(), "serve", "--bind", "256.1.1.1", "--port", "0", "--once"});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("cannot resolve the address to listen on, 256.1.1.1"));
  o = run({"unshare", "-n", commgauge(), "serve", "--bind", "::1", "--port", "0", "--once"});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("cannot listen on ::1:0: Cannot assign requested address"));
  o = run({commgauge(), "serve", "--bind", "127.0.0.1", "--port", "0", "--once", "--announce-fd",
           "1000", "--accept-timeout", "0.5"});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("--announce-fd: file descriptor 1000 is not open"));
  fs::remove_all(dir);
}

// What `serve --once` exits with when its one client sends `payload` as its first frame (the
// frame's header written by hand, as TcpTransport writes it: magic "CGTP", tag, length; all
// little-endian), over loopback only.
Outcome serve_once_given(const std::string& payload, bool good_magic = true) {
  Background server(
      {commgauge(), "serve", "--bind", "127.0.0.1", "--port", "0", "--once", "--io-timeout", "30"});
  const std::string line = server.wait_for_stderr("listening on", std::chrono::seconds(30));
  EXPECT_FALSE(line.empty()) << server.stderr_seen();
  const std::string port = line.substr(line.rfind(':') + 1);
  const std::string script =
      "import socket, struct, sys\n"
      "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))\n"
      "p = sys.argv[2].encode()\n"
      "s.sendall(struct.pack('<IIQ', int(sys.argv[3]), 3, len(p)) + p)\n"
      "s.recv(65536)\n";
  const Outcome client =
      run({"python3", "-c", script, port, payload, good_magic ? "1347700547" : "1"});  // 0x50544743
  EXPECT_EQ(client.exit_code, 0) << client.err;
  Outcome o;
  server.wait_for_stderr("commgauge: ", std::chrono::seconds(60));  // its error
  o.exit_code = server.wait_for_exit(std::chrono::seconds(60));
  o.err = server.stderr_seen();
  return o;
}

// serve's own codes: the job a client sends is that client's input (2); a client that does not
// speak the protocol is a transport failure (3), like one that stops answering.
TEST(CliValues, ServeExitsByWhatItsClientSent) {
  const std::string version = [] {
    const Outcome v = run({commgauge(), "--version"});
    std::istringstream words(v.out);
    std::string name, number;
    words >> name >> number;
    return number;
  }();
  ASSERT_FALSE(version.empty());
  const std::string hello = R"({"hello": "commgauge", "version": ")" + version + R"(", "job": )";
  Outcome o = serve_once_given(hello + R"({"method": "nonsense", "params": {}}})");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("unknown method \"nonsense\""));
  o = serve_once_given(hello + R"({"method": "latency", "params": "not an object"}})");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("malformed parameters for method latency"));
  o = serve_once_given(R"({"hello": "something else"})");
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_THAT(o.err, HasSubstr("the client did not send a commgauge job"));
  o = serve_once_given("{}", false);
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_THAT(o.err, HasSubstr("malformed frame (bad magic)"));
}

// What `commgauge completion bash` completes for the words before the cursor (the last word
// is the one being completed), run in bash as bash-completion would.
std::vector<std::string> completions(const std::vector<std::string>& words) {
  const std::string script = scratch_file("completion.bash").string();
  const Outcome gen = run({commgauge(), "completion", "bash"});
  EXPECT_EQ(gen.exit_code, 0) << gen.err;
  std::ofstream(script) << gen.out;
  std::string array = "commgauge";
  for (const auto& w : words)
    array += " '" + w + "'";
  const Outcome o = run({"bash", "-c",
                         "source '" + script + "'; COMP_WORDS=(" + array +
                             "); COMP_CWORD=" + std::to_string(words.size()) +
                             "; _commgauge; printf '%s\\n' \"${COMPREPLY[@]}\""});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  std::vector<std::string> out;
  std::istringstream lines(o.out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

TEST(Completion, BashCompletesSubcommandsAndTheirOptionsFromTheCommandLineItself) {
  using ::testing::ElementsAre;
  EXPECT_THAT(completions({"pro"}), ElementsAre("profile"));
  EXPECT_THAT(completions({"trace-e"}), ElementsAre("trace-export"));
  EXPECT_THAT(completions({"loggp", "--max-s"}), ElementsAre("--max-size"));
  EXPECT_THAT(completions({"predict", "p"}), ElementsAre("pingpong"));
  EXPECT_THAT(completions({"predict", "pingpong", "--pro"}), ElementsAre("--profile"));
  // An option's value and positional arguments complete as files; options stay per command.
  EXPECT_THAT(completions({"simulate", "--model", "loggps", "--crit"}),
              ElementsAre("--critical-path"));
  EXPECT_THAT(completions({"timer", "--max-s"}), ::testing::IsEmpty());
  // A file name with a space and a glob character is one completion.
  const std::string dir = ::testing::TempDir() + "/completion dir";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/my [run] 1.json") << "{}";
  EXPECT_THAT(completions({"simulate", dir + "/my"}), ElementsAre(dir + "/my [run] 1.json"));
  std::filesystem::remove_all(dir);
}

TEST(Completion, AnUnknownShellIsAnInputError) {
  const Outcome o = run({commgauge(), "completion", "fish"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_THAT(o.err, HasSubstr("expected bash"));
}

}  // namespace
}  // namespace commgauge::testing
