// `commgauge completion bash`: a bash completion script generated from the command line itself
// (every subcommand, nested subcommand and option as registered), so it cannot drift from it.

#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/options.hpp"
#include "common/error.hpp"

namespace commgauge::cli {

namespace {

// The words completing after `app`: its subcommands, then its options' names.
std::string words_of(CLI::App& app) {
  std::vector<std::string> words;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    words.push_back(sub->get_name());
  for (const CLI::Option* option : app.get_options()) {
    for (const auto& name : option->get_lnames())
      words.push_back("--" + name);
    for (const auto& name : option->get_snames())
      words.push_back("-" + name);
  }
  return fmt::format("{}", fmt::join(words, " "));
}

// One `case` arm per command path ("predict pingpong"), depth first.
void arms(CLI::App& app, const std::string& path, std::string& out) {
  out += fmt::format("    \"{}\") words=\"{}\" ;;\n", path, words_of(app));
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    arms(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
}

std::string bash_script(CLI::App& root) {
  std::string cases;
  arms(root, "", cases);
  // clang-format off
  return R"SH(# bash completion for commgauge, written by `commgauge completion bash` from its own
# command line. Install: commgauge completion bash > /etc/bash_completion.d/commgauge
_commgauge() {
  local cur="${COMP_WORDS[COMP_CWORD]}" path="" word words i
  # The command path: the words before the cursor that name a subcommand of the path so far.
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="${COMP_WORDS[i]}"
    [[ "$word" == -* ]] && continue
    case " $(_commgauge_words "$path") " in
      *" $word "*) path="${path:+$path }$word" ;;
    esac
  done
  words="$(_commgauge_words "$path")"
  # One completion per line (mapfile): file names with spaces or glob characters stay whole.
  if [[ "$cur" == -* || -z "$path" ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
  else
    # Subcommands of the path, else files (option values and positional arguments).
    local subs="" w
    for w in $words; do [[ "$w" != -* ]] && subs="$subs $w"; done
    mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur"; compgen -f -- "$cur")
  fi
}
_commgauge_words() {
  local words=""
  case "$1" in
)SH" + cases + R"SH(  esac
  printf '%s' "$words"
}
complete -o filenames -F _commgauge commgauge
)SH";
  // clang-format on
}

}  // namespace

void add_completion_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "completion",
      "Print a shell completion script generated from this command line (every subcommand and "
      "option): `source <(commgauge completion bash)`, or install it as "
      "/etc/bash_completion.d/commgauge (cmake --install does, under share/bash-completion).");
  auto shell = std::make_shared<std::string>();
  cmd->add_option("shell", *shell, "the shell: bash")->required();
  cmd->callback([&action, &app, shell] {
    action = [&app, shell](int&, char**&) {
      if (*shell != "bash")
        throw InputError("shell", fmt::format("expected bash, got \"{}\"", *shell));
      std::fputs(bash_script(app).c_str(), stdout);
      return 0;
    };
  });
}

}  // namespace commgauge::cli
