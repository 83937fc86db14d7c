#include "trace/functions.hpp"

#include <string>
#include <unordered_map>

namespace commgauge::trace {

const FunctionInfo* find_function(std::uint32_t id) {
  const auto table = function_table();
  if (id == 0 || id > table.size()) return nullptr;
  return &table[id - 1];
}

std::optional<std::uint32_t> function_id(std::string_view c_name) {
  static const auto by_name = [] {
    std::unordered_map<std::string_view, std::uint32_t> m;
    for (const FunctionInfo& f : function_table())
      m.emplace(f.name, f.id);
    return m;
  }();
  const auto it = by_name.find(c_name);
  if (it == by_name.end()) return std::nullopt;
  return it->second;
}

std::string_view function_name(std::uint32_t id) {
  if (const FunctionInfo* f = find_function(id)) return f->name;
  static thread_local std::string unknown;
  unknown = "function#" + std::to_string(id);
  return unknown;
}

std::string_view to_string(FunctionClass c) {
  switch (c) {
    case FunctionClass::modeled:
      return "modeled";
    case FunctionClass::local:
      return "local";
    case FunctionClass::opaque:
      return "opaque";
    case FunctionClass::special:
      return "special";
  }
  return "unknown";
}

}  // namespace commgauge::trace
