#pragma once
// A validator for the subset of JSON Schema (draft 2020-12) that commgauge's schema files use:
// type, const, enum, required, properties, additionalProperties (boolean), items, minItems,
// minimum, maximum, exclusiveMinimum, and local "$ref": "#/$defs/name".
// Debian ships no C++ JSON Schema validator; this one covers exactly what our schemas need and
// rejects a schema that uses anything else, so the schema files stay the single specification.

#include <string>

#include <nlohmann/json.hpp>

namespace commgauge::profile {

class JsonSchema {
 public:
  /// Throws std::invalid_argument if the schema uses a keyword this validator does not know.
  explicit JsonSchema(nlohmann::json schema);

  /// Throws InputError "<where>: <json pointer>: <what was expected>" at the first violation.
  void validate(const nlohmann::json& document, const std::string& where) const;

 private:
  void check_keywords(const nlohmann::json& schema, const std::string& at) const;
  void validate_at(const nlohmann::json& schema, const nlohmann::json& value,
                   const std::string& pointer, const std::string& where) const;
  const nlohmann::json& resolve(const nlohmann::json& schema) const;

  nlohmann::json schema_;
};

}  // namespace commgauge::profile
