// libFuzzer target for the command line: the input is a command line (arguments separated by
// NUL bytes; the first byte, if below 32, picks the subcommand so that every one is reached
// without spelling its name), parsed in-process by the real command line. A parse ends with the
// command's action chosen or with a parse or input error; anything else - another exception, a
// crash, a memory or undefined-behaviour error (the target runs under ASan + UBSan) - is a
// finding. Nothing is run: only what parsing does (value checks, conversions) is fuzzed.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>
#include <vector>

#include "cli/command_line.hpp"
#include "common/error.hpp"

namespace {

constexpr std::size_t kMaxArguments = 32;

// The subcommands' names, in the command line's order, from the command line itself.
const std::vector<std::string>& subcommand_names() {
  static const std::vector<std::string> names = [] {
    commgauge::cli::Action action;
    const auto app = commgauge::cli::make_command_line(action);
    std::vector<std::string> out;
    for (const CLI::App* sub : app->get_subcommands({}))
      out.push_back(sub->get_name());
    return out;
  }();
  return names;
}

std::vector<std::string> arguments_of(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args = {"commgauge"};
  std::size_t i = 0;
  if (size > 0 && data[0] < 32) {
    const auto& names = subcommand_names();
    args.push_back(names[data[0] % names.size()]);
    i = 1;
  }
  std::string current;
  for (; i < size && args.size() < kMaxArguments; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (args.size() < kMaxArguments && (!current.empty() || (size > 0 && data[size - 1] == 0)))
    args.push_back(current);
  return args;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args = arguments_of(data, size);
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  // A new command line per input: a reused one keeps the previous input's values in the options
  // it binds, and a finding must reproduce from its input alone.
  commgauge::cli::Action action;
  const auto app = commgauge::cli::make_command_line(action);
  try {
    app->parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {
  } catch (const commgauge::InputError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "the command line threw %s: %s\n", typeid(e).name(), e.what());
    std::abort();
  }
  return 0;
}
