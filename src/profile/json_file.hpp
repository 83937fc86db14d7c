#pragma once
// Reading and writing JSON documents with errors that name the file, line and column.

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace commgauge::profile {

/// Parses a JSON file. Throws InputError "file:line:col: ..." on a syntax error and
/// "file: cannot open" if it cannot be read.
nlohmann::json read_json_file(const std::filesystem::path& path);

/// Parses JSON text; `where` names its source in errors.
nlohmann::json parse_json(const std::string& text, const std::string& where);

/// Writes `document` indented with commgauge::write_text_file; bytes that are not UTF-8 become
/// U+FFFD.
void write_json_file(const std::filesystem::path& path, const nlohmann::json& document);

}  // namespace commgauge::profile
