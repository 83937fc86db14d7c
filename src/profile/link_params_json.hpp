#pragma once
// The link-parameter document (schemas/link-params.v1.schema.json): read, validated, written.

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "model/link_params.hpp"
#include "profile/json_schema.hpp"

namespace commgauge::profile {

/// The schema file of the repository, embedded at build time.
const JsonSchema& link_params_schema();
/// Its text, for --help and documentation.
const std::string& link_params_schema_text();

/// Validates against the schema, then the semantic checks of model::validate and the
/// to_bytes consistency. `where` names the source in errors.
model::LinkParams link_params_from_json(const nlohmann::json& document, const std::string& where);

model::LinkParams read_link_params(const std::filesystem::path& path);

/// The document for `link` (format, version, L_us, L_negative, ranges with to_bytes).
nlohmann::json link_params_to_json(const model::LinkParams& link);

}  // namespace commgauge::profile
