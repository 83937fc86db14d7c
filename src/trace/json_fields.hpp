#pragma once
// Reading fields of trace JSON (rank headers, index, records) that may be damaged: a missing
// field or one of the wrong type gives the fallback, never an exception.

#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace commgauge::trace {

template <typename T>
T json_field(const nlohmann::json& j, const char* key, T fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if constexpr (std::is_same_v<T, bool>) {
    return it->is_boolean() ? it->template get<bool>() : fallback;
  } else if constexpr (std::is_arithmetic_v<T>) {
    if (!it->is_number()) return fallback;
    if constexpr (std::is_unsigned_v<T>) {
      if (it->is_number_integer() && it->template get<std::int64_t>() < 0) return fallback;
    }
    return it->template get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->template get<std::string>() : fallback;
  } else {
    return it->is_object() ? *it : fallback;
  }
}

/// A sub-object, or an empty object.
inline const nlohmann::json& json_object(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  if (!j.is_object()) return empty;
  const auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : empty;
}

}  // namespace commgauge::trace
