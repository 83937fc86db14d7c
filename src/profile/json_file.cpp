#include "profile/json_file.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/input_file.hpp"
#include "common/json_text.hpp"
#include "common/text_file.hpp"

namespace commgauge::profile {

nlohmann::json parse_json(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based and points just past the offending character.
    std::size_t line = 1;
    std::size_t col = 1;
    const std::size_t end = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    for (std::size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    const auto pos = what.find("syntax error");
    if (pos != std::string::npos) what = what.substr(pos);
    throw InputError(fmt::format("{}:{}:{}", where, line, col), "invalid JSON: " + what);
  } catch (const nlohmann::json::exception& e) {
    // A number past the range of a double (out_of_range 406, found by the readers' fuzzer)
    // carries no position.
    std::string what = e.what();
    const auto pos = what.find("] ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    throw InputError(where, "invalid JSON: " + what);
  }
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  return parse_json(read_input_file(path), path.string());
}

void write_json_file(const std::filesystem::path& path, const nlohmann::json& document) {
  // Bytes that are not UTF-8 (a command line, a host name) become U+FFFD instead of an error
  // that would lose the measurements.
  write_text_file(path, json_text(document, 2) + "\n");
}

}  // namespace commgauge::profile
