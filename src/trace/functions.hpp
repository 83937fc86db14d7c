#pragma once
// The MPI function table of the trace format: ids, names and classes, generated at build time
// from mpi_functions.txt (a function's id is its line among the entries, from 1).

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace commgauge::trace {

enum class FunctionClass : std::uint8_t {
  modeled,  ///< recorded with full arguments
  local,    ///< counted, never an event
  opaque,   ///< communicates, not modeled: an opaque event that makes the trace incomplete
  special,  ///< Init, Init_thread, Finalize, Abort, Pcontrol
};

struct FunctionInfo {
  std::uint32_t id;
  std::string_view name;  ///< C name, e.g. "MPI_Send"
  FunctionClass function_class;
  std::string_view pattern;  ///< recorder pattern of modeled functions ("send", "waitall"...)
};

/// All functions, indexed by id - 1.
std::span<const FunctionInfo> function_table();

/// The function with this id, or nullptr if the id is unknown.
const FunctionInfo* find_function(std::uint32_t id);
std::optional<std::uint32_t> function_id(std::string_view c_name);

/// "MPI_Send", or "function#<id>" for an id this build does not know.
std::string_view function_name(std::uint32_t id);

std::string_view to_string(FunctionClass c);

}  // namespace commgauge::trace
