#pragma once
// JSON text of a document that may hold bytes from outside (a command line, a host name, a file
// name): bytes that are not UTF-8 become U+FFFD instead of nlohmann's type_error 316, which
// would abort a traced program or lose a run's measurements.

#include <string>

#include <nlohmann/json.hpp>

namespace commgauge {

inline std::string json_text(const nlohmann::json& document, int indent = -1) {
  return document.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace commgauge
