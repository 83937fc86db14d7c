#pragma once
// What an MPI library says about itself: its version string and its control variables (the
// MPI tool information interface, MPI_T). Used by the MPI transport and by the tracer, which
// record the point-to-point layer and the collective tuning in force.

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace commgauge::net {

/// MPI_THREAD_* for "single", "funneled", "serialized", "multiple"; throws InputError otherwise.
int mpi_thread_level_from_string(const std::string& name);
/// The name of an MPI_THREAD_* level (as above; "unknown" for another value).
std::string mpi_thread_level_name(int level);

/// The first line of MPI_Get_library_version, without trailing separators.
std::string mpi_library_version();

/// Every control variable whose name `wanted` accepts, as {name: value}; enumerated values
/// are given by their name. {} if the library has no MPI_T.
nlohmann::json read_control_variables(const std::function<bool(const std::string&)>& wanted);

/// Open MPI's point-to-point layer: requested pml/btl, the opened components, BTL eager limits.
nlohmann::json point_to_point_layer();

/// The collective components' selection and Open MPI's tuned-component parameters in force
/// (coll, coll_tuned_use_dynamic_rules, coll_tuned_*_algorithm, segment sizes...).
nlohmann::json collective_settings();

/// Both, from one MPI_T session ({"point_to_point": ..., "collectives": ...}): opening one
/// costs Open MPI 4.1 about 0.2 s here.
nlohmann::json point_to_point_and_collectives();

}  // namespace commgauge::net
