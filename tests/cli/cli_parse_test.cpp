// A fuzz of the command line's values: every option of every subcommand (nested ones too) is
// given hostile values - empty, signs, huge and tiny numbers, nan and inf, malformed sizes and
// lists, invalid UTF-8, random bytes - and the real command line parses each in-process. Each
// parse ends with the command's action chosen, or with a parse or input error; any other
// exception is a defect (under AddressSanitizer + UBSan in CI, so is any memory error).

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <typeinfo>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cli/command_line.hpp"
#include "common/error.hpp"

namespace commgauge::cli {
namespace {

struct Target {
  std::vector<std::string> path;  // subcommand names from the top
  std::string option;             // "--flag", or empty for a positional
  bool takes_value = true;
};

void collect(const CLI::App& app, std::vector<std::string> path, std::vector<Target>& out) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_name() == "--help" || opt->get_name() == "--help-all" ||
        opt->get_name() == "--version")
      continue;
    Target t;
    t.path = path;
    t.takes_value = opt->get_type_size() != 0;
    if (opt->nonpositional()) {
      const auto& longs = opt->get_lnames();
      const auto& shorts = opt->get_snames();
      if (!longs.empty()) {
        t.option = "--" + longs.front();
      } else if (!shorts.empty()) {
        t.option = "-" + shorts.front();
      } else {
        continue;
      }
    }
    out.push_back(t);
  }
  for (const CLI::App* sub : app.get_subcommands({})) {
    auto p = path;
    p.push_back(sub->get_name());
    collect(*sub, p, out);
  }
}

std::vector<std::string> hostile_values(std::mt19937_64& rng) {
  std::vector<std::string> v = {"",
                                " ",
                                "-",
                                "--",
                                "0",
                                "-0",
                                "-1",
                                "1e999",
                                "-1e999",
                                "1e-400",
                                "nan",
                                "inf",
                                "-inf",
                                "18446744073709551616",
                                "9223372036854775808",
                                "-9223372036854775809",
                                "4294967296",
                                "0x10",
                                "1,,2",
                                ",",
                                ":",
                                "1:0",
                                "0:1:0",
                                "8:1",
                                "1KiB:1B",
                                "1:1MiB:1",
                                "1:1MiB:0.5",
                                "1:1EiB:1.0000001",
                                "99999999999999999999EiB",
                                "16EiB",
                                "1.5B",
                                "KiB",
                                "1 KiB",
                                "\xff\xfe",
                                "a=b",
                                "=",
                                "auto",
                                "all",
                                "none",
                                "exponential:1e308",
                                "normal:5:1",
                                "127.0.0.1:0",
                                "[::1]:99999",
                                "/dev/null",
                                "/nonexistent/dir/file.json",
                                std::string(4096, '9')};
  std::uniform_int_distribution<int> len(1, 24), byte(1, 255), digit('0', '9');
  const char* units[] = {"", "B", "KiB", "MiB", "GiB", "k", "e300", "%", ":"};
  for (int i = 0; i < 8; ++i) {
    std::string s;
    const int n = len(rng);
    for (int k = 0; k < n; ++k)
      s.push_back(static_cast<char>(byte(rng)));
    v.push_back(s);
    std::string num;
    for (int k = 0; k < n; ++k)
      num.push_back(static_cast<char>(digit(rng)));
    v.push_back(num + units[static_cast<std::size_t>(rng() % std::size(units))]);
  }
  return v;
}

enum class Outcome { accepted, parse_error, input_error };

// Parses `args` with `app` (cleared first: one command line serves every parse of a target, as
// building one costs more than parsing with it).
Outcome parse(CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> all = {"commgauge"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all)
    argv.push_back(a.data());
  app.clear();
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {
    return Outcome::parse_error;
  } catch (const InputError&) {
    return Outcome::input_error;
  }
  return Outcome::accepted;
}

std::string shown(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) {
    s += " '";
    for (unsigned char c : a)
      s += c >= 32 && c < 127 ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
    s += "'";
  }
  return s;
}

TEST(CliFuzz, EveryOptionGivenHostileValuesIsParsedOrRefusedNeverAnythingElse) {
  Action action;
  const auto app = make_command_line(action);
  std::vector<Target> targets;
  collect(*app, {}, targets);
  // Every subcommand's options, nested ones too: far more than any one command has.
  ASSERT_GT(targets.size(), 150u);
  const std::uint64_t seed = std::random_device{}();
  std::printf("seed %llu, %zu options\n", static_cast<unsigned long long>(seed), targets.size());
  std::mt19937_64 rng(seed);
  std::size_t parses = 0, accepted = 0, refused = 0;
  for (const Target& t : targets) {
    Action chosen;
    const auto command_line = make_command_line(chosen);
    const auto values = t.takes_value ? hostile_values(rng) : std::vector<std::string>{""};
    for (const std::string& value : values) {
      std::vector<std::string> args = t.path;
      if (!t.option.empty()) args.push_back(t.option);
      if (t.takes_value) args.push_back(value);
      ++parses;
      try {
        (parse(*command_line, args) == Outcome::accepted ? accepted : refused) += 1;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "seed " << seed << ":" << shown(args) << " threw " << typeid(e).name()
                      << ": " << e.what();
      }
    }
  }
  std::printf("%zu parses: %zu accepted, %zu refused with a parse or input error\n", parses,
              accepted, refused);
  EXPECT_GT(refused, parses / 2) << "most hostile values must be refused";
}

// The CLI fuzzer's seeds (tests/fuzz/seeds-cli) are real command lines, one or more per
// subcommand: each parses and chooses its command, so the fuzzer starts inside every command's
// own checks, not at a parse error; and every subcommand has one.
TEST(CliFuzzSeeds, EveryOneParsesAndEverySubcommandHasOne) {
  std::set<std::string> seeded;
  const std::filesystem::path dir =
      std::filesystem::path(COMMGAUGE_SOURCE_DIR) / "tests" / "fuzz" / "seeds-cli";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> args;
    std::size_t start = 0;
    for (std::size_t nul; (nul = text.find('\0', start)) != std::string::npos; start = nul + 1)
      args.push_back(text.substr(start, nul - start));
    args.push_back(text.substr(start));
    Action action;
    const auto app = make_command_line(action);
    EXPECT_EQ(parse(*app, args), Outcome::accepted) << entry.path() << ":" << shown(args);
    EXPECT_TRUE(static_cast<bool>(action)) << entry.path();
    seeded.insert(args.front());
  }
  Action action;
  const auto app = make_command_line(action);
  for (const CLI::App* sub : app->get_subcommands({}))
    EXPECT_TRUE(seeded.count(sub->get_name())) << "no seed for " << sub->get_name();
}

}  // namespace
}  // namespace commgauge::cli
