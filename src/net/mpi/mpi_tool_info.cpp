#include "net/mpi/mpi_tool_info.hpp"

#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge::net {

namespace {

/// Reads one control variable's value as JSON (string, number or enumerated name).
nlohmann::json read_value(int index, MPI_Datatype type, MPI_T_enum enumtype) {
  MPI_T_cvar_handle handle;
  int elements = 0;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &elements) != MPI_SUCCESS) return nullptr;
  nlohmann::json value = nullptr;
  if (type == MPI_CHAR) {
    std::vector<char> text(static_cast<std::size_t>(std::max(elements, 1)) + 1, '\0');
    if (MPI_T_cvar_read(handle, text.data()) == MPI_SUCCESS) value = std::string(text.data());
  } else if (elements == 1 && (type == MPI_INT || type == MPI_UNSIGNED)) {
    int v = 0;
    if (MPI_T_cvar_read(handle, &v) == MPI_SUCCESS) {
      value = type == MPI_INT ? nlohmann::json(v) : nlohmann::json(static_cast<unsigned>(v));
      if (enumtype != MPI_T_ENUM_NULL) {
        int items = 0;
        char name[256] = {};
        int name_len = sizeof name;
        MPI_T_enum_get_info(enumtype, &items, name, &name_len);
        for (int i = 0; i < items; ++i) {
          int item_value = 0;
          char item[256] = {};
          int item_len = sizeof item;
          if (MPI_T_enum_get_item(enumtype, i, &item_value, item, &item_len) == MPI_SUCCESS &&
              item_value == v) {
            value = std::string(item);
            break;
          }
        }
      }
    }
  } else if (elements == 1 &&
             (type == MPI_UNSIGNED_LONG || type == MPI_UNSIGNED_LONG_LONG || type == MPI_COUNT)) {
    unsigned long long v = 0;
    if (MPI_T_cvar_read(handle, &v) == MPI_SUCCESS) value = v;
  } else if (elements == 1 && type == MPI_DOUBLE) {
    double v = 0;
    if (MPI_T_cvar_read(handle, &v) == MPI_SUCCESS) value = v;
  }
  MPI_T_cvar_handle_free(&handle);
  return value;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int mpi_thread_level_from_string(const std::string& name) {
  if (name == "single") return MPI_THREAD_SINGLE;
  if (name == "funneled") return MPI_THREAD_FUNNELED;
  if (name == "serialized") return MPI_THREAD_SERIALIZED;
  if (name == "multiple") return MPI_THREAD_MULTIPLE;
  throw InputError(
      "thread level",
      fmt::format("expected single, funneled, serialized or multiple, got \"{}\"", name));
}

std::string mpi_thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "single";
    case MPI_THREAD_FUNNELED:
      return "funneled";
    case MPI_THREAD_SERIALIZED:
      return "serialized";
    case MPI_THREAD_MULTIPLE:
      return "multiple";
  }
  return "unknown";
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<std::size_t>(len));
  const auto nl = s.find_first_of("\r\n");
  if (nl != std::string::npos) s = s.substr(0, nl);
  while (!s.empty() && (s.back() == ',' || s.back() == ' ' || s.back() == '\0'))
    s.pop_back();
  return s;
}

nlohmann::json read_control_variables(const std::function<bool(const std::string&)>& wanted) {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
    return nlohmann::json::object();
  nlohmann::json out = nlohmann::json::object();
  int count = 0;
  MPI_T_cvar_get_num(&count);
  for (int i = 0; i < count; ++i) {
    char name[256] = {};
    int name_len = sizeof name;
    int verbosity = 0, binding = 0, scope = 0;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &enumtype, nullptr, nullptr,
                            &binding, &scope) != MPI_SUCCESS) {
      continue;
    }
    if (!wanted(name)) continue;
    nlohmann::json value = read_value(i, type, enumtype);
    if (!value.is_null()) out[name] = std::move(value);
  }
  MPI_T_finalize();
  return out;
}

namespace {

std::string component(const std::string& n, const std::string& prefix, const std::string& suffix) {
  if (!starts_with(n, prefix) || n.size() <= prefix.size() + suffix.size() || !ends_with(n, suffix))
    return std::string();
  const std::string c = n.substr(prefix.size(), n.size() - prefix.size() - suffix.size());
  return c.find('_') == std::string::npos ? c : std::string();
}

// MPICH names its control variables MPIR_CVAR_<NAME>: its eager thresholds end in
// EAGER_MAX_MSG_SIZE (CH3, CH4's OFI netmod) or EAGER_MAX_SZ (Nemesis shared memory).
constexpr const char* kMpichPrefix = "MPIR_CVAR_";

bool mpich_eager_limit(const std::string& n) {
  return starts_with(n, kMpichPrefix) &&
         (ends_with(n, "EAGER_MAX_MSG_SIZE") || ends_with(n, "EAGER_MAX_SZ"));
}

// MPICH's collective selection: a variable naming an operation (its algorithm per operation,
// intra and inter, its size thresholds) or the selection itself.
bool mpich_collective_variable(const std::string& n) {
  if (!starts_with(n, kMpichPrefix)) return false;
  for (const char* op :
       {"BARRIER", "BCAST", "GATHER", "SCATTER", "ALLTOALL", "REDUCE", "SCAN", "COLL"}) {
    if (n.find(op, std::string(kMpichPrefix).size()) != std::string::npos) return true;
  }
  return false;
}

bool point_to_point_variable(const std::string& n) {
  return n == "pml" || n == "btl" || !component(n, "btl_", "_eager_limit").empty() ||
         mpich_eager_limit(n);
}

bool collective_variable(const std::string& n) {
  if (n == "coll" || mpich_collective_variable(n)) return true;
  if (starts_with(n, "coll_") && ends_with(n, "_priority")) return true;
  if (!starts_with(n, "coll_tuned_")) return false;
  return ends_with(n, "_algorithm") || ends_with(n, "_segmentsize") ||
         ends_with(n, "_tree_fanout") || ends_with(n, "_chain_fanout") ||
         ends_with(n, "_max_requests") || n == "coll_tuned_use_dynamic_rules" ||
         n == "coll_tuned_dynamic_rules_filename" || n == "coll_tuned_priority";
}

/// pml_<x>_priority names the pml components that registered (were opened);
/// btl_<x>_eager_limit each opened BTL's eager limit.
nlohmann::json point_to_point_from(const nlohmann::json& vars,
                                   const std::vector<std::string>& pmls) {
  std::vector<std::string> btls;
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : vars.items()) {
    if (!point_to_point_variable(name)) continue;
    if (name == "pml") {
      out["pml_requested"] = value;
    } else if (name == "btl") {
      out["btl_requested"] = value;
    } else if (mpich_eager_limit(name)) {
      out["eager_limits"][name] = value;  // MPICH's own name for it
    } else if (value.is_number()) {
      const std::string btl = component(name, "btl_", "_eager_limit");
      btls.push_back(btl);
      out["eager_limits"][btl] = value;
    }
  }
  if (pmls.size() == 1)
    out["pml"] = pmls[0];
  else if (!pmls.empty())
    out["pml_candidates"] = pmls;
  if (!btls.empty()) out["btls_opened"] = btls;
  return out;
}

}  // namespace

nlohmann::json point_to_point_layer() {
  std::vector<std::string> pmls;
  const nlohmann::json vars = read_control_variables([&](const std::string& n) {
    if (const auto pml = component(n, "pml_", "_priority"); !pml.empty()) pmls.push_back(pml);
    return point_to_point_variable(n);
  });
  return point_to_point_from(vars, pmls);
}

nlohmann::json collective_settings() {
  return read_control_variables(collective_variable);
}

nlohmann::json point_to_point_and_collectives() {
  std::vector<std::string> pmls;
  const nlohmann::json vars = read_control_variables([&](const std::string& n) {
    if (const auto pml = component(n, "pml_", "_priority"); !pml.empty()) pmls.push_back(pml);
    return point_to_point_variable(n) || collective_variable(n);
  });
  nlohmann::json collectives = nlohmann::json::object();
  for (const auto& [name, value] : vars.items())
    if (collective_variable(name)) collectives[name] = value;
  return {{"point_to_point", point_to_point_from(vars, pmls)}, {"collectives", collectives}};
}

}  // namespace commgauge::net
