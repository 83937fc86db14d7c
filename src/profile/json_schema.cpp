#include "profile/json_schema.hpp"

#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge::profile {

namespace {

const std::set<std::string>& known_keywords() {
  static const std::set<std::string> k = {"$schema", "$id",      "$defs",
                                          "$ref",    "title",    "description",
                                          "default", "type",     "const",
                                          "enum",    "required", "properties",
                                          "items",   "minItems", "additionalProperties",
                                          "minimum", "maximum",  "exclusiveMinimum"};
  return k;
}

bool has_type(const nlohmann::json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  if (type == "number") return v.is_number();
  if (type == "integer") {
    if (v.is_number_integer()) return true;
    // A number written as a float (1e3, or past 2^64 where the parser keeps no integer) counts
    // as an integer if it is whole and exact in a double (|x| <= 2^53): the readers take integers
    // as integer types, and a cast past their range is undefined (the fuzzer's from_bytes of
    // 8.9e29 was cast to long long here).
    if (!v.is_number_float()) return false;
    const double x = v.get<double>();
    return std::isfinite(x) && std::trunc(x) == x && std::abs(x) <= 9007199254740992.0;
  }
  throw std::invalid_argument("unknown JSON Schema type " + type);
}

std::string escape_pointer_token(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string brief(const nlohmann::json& v) {
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

}  // namespace

JsonSchema::JsonSchema(nlohmann::json schema) : schema_(std::move(schema)) {
  check_keywords(schema_, "#");
}

void JsonSchema::check_keywords(const nlohmann::json& schema, const std::string& at) const {
  if (!schema.is_object()) throw std::invalid_argument("schema at " + at + " is not an object");
  for (const auto& [key, value] : schema.items()) {
    if (!known_keywords().contains(key)) {
      throw std::invalid_argument("schema keyword '" + key + "' at " + at + " is not supported");
    }
    if (key == "properties" || key == "$defs") {
      for (const auto& [name, sub] : value.items())
        check_keywords(sub, at + "/" + key + "/" + name);
    } else if (key == "items") {
      check_keywords(value, at + "/items");
    } else if (key == "additionalProperties" && value.is_object()) {
      check_keywords(value, at + "/additionalProperties");
    } else if (key == "$ref") {
      (void)resolve(schema);
    }
  }
}

const nlohmann::json& JsonSchema::resolve(const nlohmann::json& schema) const {
  if (!schema.contains("$ref")) return schema;
  const std::string ref = schema["$ref"].get<std::string>();
  const std::string prefix = "#/$defs/";
  if (ref.rfind(prefix, 0) != 0) throw std::invalid_argument("unsupported $ref " + ref);
  const std::string name = ref.substr(prefix.size());
  if (!schema_.contains("$defs") || !schema_["$defs"].contains(name)) {
    throw std::invalid_argument("unresolved $ref " + ref);
  }
  return schema_["$defs"][name];
}

void JsonSchema::validate(const nlohmann::json& document, const std::string& where) const {
  validate_at(schema_, document, "", where);
}

void JsonSchema::validate_at(const nlohmann::json& schema_in, const nlohmann::json& value,
                             const std::string& pointer, const std::string& where) const {
  const nlohmann::json& schema = resolve(schema_in);
  const std::string at = pointer.empty() ? "/" : pointer;
  auto fail = [&](const std::string& what) { throw InputError(where, at + ": " + what); };

  if (schema.contains("const") && value != schema["const"]) {
    fail(fmt::format("expected {}, got {}", schema["const"].dump(), brief(value)));
  }
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& option : schema["enum"])
      found = found || option == value;
    if (!found)
      fail(fmt::format("expected one of {}, got {}", schema["enum"].dump(), brief(value)));
  }
  if (schema.contains("type")) {
    const std::string type = schema["type"].get<std::string>();
    if (!has_type(value, type)) fail(fmt::format("expected {}, got {}", type, brief(value)));
  }
  if (value.is_number()) {
    const double x = value.get<double>();
    if (schema.contains("minimum") && x < schema["minimum"].get<double>()) {
      fail(fmt::format("must be >= {}, got {}", schema["minimum"].dump(), brief(value)));
    }
    if (schema.contains("exclusiveMinimum") && x <= schema["exclusiveMinimum"].get<double>()) {
      fail(fmt::format("must be > {}, got {}", schema["exclusiveMinimum"].dump(), brief(value)));
    }
    if (schema.contains("maximum") && x > schema["maximum"].get<double>()) {
      fail(fmt::format("must be <= {}, got {}", schema["maximum"].dump(), brief(value)));
    }
  }
  if (value.is_object()) {
    if (schema.contains("required")) {
      for (const auto& name : schema["required"]) {
        if (!value.contains(name.get<std::string>())) {
          throw InputError(where, fmt::format("{}{}: required field is missing", pointer + "/",
                                              name.get<std::string>()));
        }
      }
    }
    const bool closed = schema.contains("additionalProperties") &&
                        schema["additionalProperties"].is_boolean() &&
                        !schema["additionalProperties"].get<bool>();
    for (const auto& [key, sub] : value.items()) {
      const std::string child = pointer + "/" + escape_pointer_token(key);
      if (schema.contains("properties") && schema["properties"].contains(key)) {
        validate_at(schema["properties"][key], sub, child, where);
      } else if (closed) {
        throw InputError(where, child + ": unknown field");
      } else if (schema.contains("additionalProperties") &&
                 schema["additionalProperties"].is_object()) {
        validate_at(schema["additionalProperties"], sub, child, where);  // a map's values
      }
    }
  }
  if (value.is_array()) {
    if (schema.contains("minItems") && value.size() < schema["minItems"].get<std::size_t>()) {
      fail(fmt::format("expected at least {} item(s), got {}", schema["minItems"].dump(),
                       value.size()));
    }
    if (schema.contains("items")) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        validate_at(schema["items"], value[i], pointer + "/" + std::to_string(i), where);
      }
    }
  }
}

}  // namespace commgauge::profile
