// Generates the tracer's MPI wrappers and the trace library's function table from the function
// list (src/trace/mpi_functions.txt). Run by the build:
//
//   wrapgen table    LIST OUT.cpp   the id/name/class table (trace library, no MPI)
//   wrapgen ids      LIST OUT.hpp   constants trace::fn::Send... for the same ids
//   wrapgen c        LIST OUT.cpp   C wrappers MPI_Xxx calling PMPI_Xxx
//   wrapgen fortran  LIST OUT.cpp   gfortran wrappers mpi_xxx_ calling pmpi_xxx_ (dlsym)
//
// Modeled functions hand their arguments, as C values, to the recorder named by the list's
// pattern column (tracer/hooks.hpp); the Fortran wrappers convert handles, sentinels, statuses
// and 1-based indices first, so both bindings share one recorder per pattern.

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Param {
  std::string text;  ///< as declared, e.g. "const int recvcounts[]"
  std::string type;  ///< normalised without the name: "const int[]", "MPI_Status*"
  std::string name;
};

struct Function {
  int id = 0;
  int line = 0;
  std::string klass;    ///< modeled | local | opaque | special
  std::string pattern;  ///< recorder for modeled functions
  std::string fortran;  ///< F | Fonly | -
  std::string name;     ///< "Send" (without MPI_)
  std::vector<Param> params;
  bool variadic = false;
};

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

[[noreturn]] void fail(const std::string& file, int line, const std::string& message) {
  throw std::runtime_error(file + ":" + std::to_string(line) + ": " + message);
}

Param parse_param(const std::string& raw, const std::string& file, int line) {
  Param p;
  p.text = trim(raw);
  std::string t = p.text;
  std::string suffix;
  while (!t.empty() && t.back() == ']') {  // array brackets, possibly "[][3]"
    const auto open = t.rfind('[');
    suffix = t.substr(open) + suffix;
    t = trim(t.substr(0, open));
  }
  std::size_t end = t.size();
  std::size_t begin = end;
  while (begin > 0 &&
         (std::isalnum(static_cast<unsigned char>(t[begin - 1])) || t[begin - 1] == '_'))
    --begin;
  if (begin == end) fail(file, line, "parameter without a name: " + raw);
  p.name = t.substr(begin);
  std::string type = trim(t.substr(0, begin));
  std::string compact;
  for (char c : type)
    if (c != ' ' || (!compact.empty() && compact.back() != ' ' && compact.back() != '*'))
      compact += c;
  compact = trim(compact);
  // "MPI_Status *" -> "MPI_Status*" (built by appending: GCC 12 -Wrestrict misfires on replace)
  p.type.clear();
  for (std::size_t i = 0; i < compact.size(); ++i)
    if (!(compact[i] == ' ' && i + 1 < compact.size() && compact[i + 1] == '*'))
      p.type.push_back(compact[i]);
  p.type.append(suffix);
  return p;
}

std::vector<Function> read_list(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::vector<Function> out;
  std::string text;
  int line = 0;
  std::set<std::string> seen;
  while (std::getline(in, text)) {
    ++line;
    const std::string t = trim(text);
    if (t.empty() || t[0] == '#') continue;
    std::istringstream fields(t);
    Function f;
    f.line = line;
    fields >> f.klass >> f.pattern >> f.fortran;
    std::string proto;
    std::getline(fields, proto);
    proto = trim(proto);
    if (f.klass != "modeled" && f.klass != "local" && f.klass != "opaque" && f.klass != "special")
      fail(path, line, "expected class modeled, local, opaque or special, got \"" + f.klass + "\"");
    if (f.fortran != "F" && f.fortran != "Fonly" && f.fortran != "-")
      fail(path, line, "expected fortran column F, Fonly or -, got \"" + f.fortran + "\"");
    if ((f.klass == "modeled") == (f.pattern == "-") && f.klass != "special")
      fail(path, line, "a modeled function needs a pattern, other classes take \"-\"");
    const auto open = proto.find('(');
    const auto close = proto.rfind(')');
    if (proto.rfind("int MPI_", 0) != 0 || open == std::string::npos || close != proto.size() - 1)
      fail(path, line, "expected a prototype \"int MPI_Name(...)\"");
    f.name = trim(proto.substr(8, open - 8));
    if (!seen.insert(f.name).second) fail(path, line, "MPI_" + f.name + " listed twice");
    const std::string args = trim(proto.substr(open + 1, close - open - 1));
    if (args != "void") {
      std::string current;
      int depth = 0;
      for (char c : args + ",") {
        if (c == '(') ++depth;
        if (c == ')') --depth;
        if (c == ',' && depth == 0) {
          if (trim(current) == "...")
            f.variadic = true;
          else
            f.params.push_back(parse_param(current, path, line));
          current.clear();
        } else {
          current += c;
        }
      }
    }
    f.id = static_cast<int>(out.size()) + 1;
    out.push_back(std::move(f));
  }
  return out;
}

std::string join_names(const Function& f, const std::string& prefix = "") {
  std::string s;
  for (const Param& p : f.params)
    s += (s.empty() ? "" : ", ") + prefix + p.name;
  return s;
}

std::string c_params(const Function& f) {
  if (f.params.empty() && !f.variadic) return "void";
  std::string s;
  for (const Param& p : f.params)
    s += (s.empty() ? "" : ", ") + p.text;
  if (f.variadic) s += ", ...";
  return s;
}

bool has_param(const Function& f, const std::string& name) {
  return std::any_of(f.params.begin(), f.params.end(),
                     [&](const Param& p) { return p.name == name; });
}

std::string array_length(const Function& f) {
  if (has_param(f, "count")) return "count";
  if (has_param(f, "incount")) return "incount";
  throw std::runtime_error("MPI_" + f.name + ": array without count/incount");
}

// Patterns whose recorder needs request/message/communicator handles from before the call.
const std::set<std::string> kRequestBefore = {"wait", "test", "request_free", "start"};
const std::set<std::string> kRequestArrayBefore = {"waitall", "waitany",  "waitsome", "testall",
                                                   "testany", "testsome", "startall"};
const std::set<std::string> kPoll = {"test", "testall", "testany", "testsome", "iprobe", "improbe"};

// Receives whose buffer the tracer looks at before the call (buffer, count, datatype): bytes of
// it in pages never touched, which the receive's page faults will cost (Event::fresh_bytes).
struct ReceiveBuffer {
  const char* buffer;
  const char* count;
  const char* datatype;
};
const std::map<std::string, ReceiveBuffer> kReceiveBuffer = {
    {"recv", {"buf", "count", "datatype"}},
    {"irecv", {"buf", "count", "datatype"}},
    {"sendrecv", {"recvbuf", "recvcount", "recvtype"}},
    {"sendrecv_replace", {"buf", "count", "datatype"}},
    {"mrecv", {"buf", "count", "type"}},
    {"imrecv", {"buf", "count", "type"}}};

/// The local holding the look at a receive's buffer, computed from names with `prefix` (C: none,
/// Fortran: the converted c_ values), or nothing for other patterns.
std::string receive_buffer_look_local(const Function& f, const std::string& prefix) {
  const auto it = kReceiveBuffer.find(f.pattern);
  if (it == kReceiveBuffer.end()) return "";
  return "  const commgauge::tracer::FreshLook cg_buffer_look = "
         "commgauge::tracer::look_at_receive_buffer(" +
         prefix + it->second.buffer + ", " + prefix + it->second.count + ", " + prefix +
         it->second.datatype + ");\n";
}

/// Extra recorder arguments (names of locals) in both bindings.
std::vector<std::string> extras(const Function& f) {
  std::vector<std::string> e;
  if (kRequestBefore.count(f.pattern)) e.push_back("cg_request_before");
  if (kRequestArrayBefore.count(f.pattern)) e.push_back("cg_requests_before");
  if (f.pattern == "mrecv" || f.pattern == "imrecv") e.push_back("cg_message_before");
  if (f.pattern == "comm_free") e.push_back("cg_comm_before");
  if (kReceiveBuffer.count(f.pattern)) e.push_back("cg_buffer_look");
  return e;
}

// ---- table ----

void write_table(const std::vector<Function>& fs, std::ostream& out) {
  out << "// Generated by wrapgen from mpi_functions.txt. Do not edit.\n"
         "#include \"trace/functions.hpp\"\n\nnamespace commgauge::trace {\n\nnamespace {\n"
         "constexpr FunctionInfo kFunctions[] = {\n";
  for (const Function& f : fs)
    out << "    {" << f.id << ", \"MPI_" << f.name << "\", FunctionClass::" << f.klass << ", \""
        << (f.pattern == "-" ? "" : f.pattern) << "\"},\n";
  out << "};\n}  // namespace\n\n"
         "std::span<const FunctionInfo> function_table() { return kFunctions; }\n\n"
         "}  // namespace commgauge::trace\n";
}

// ---- ids ----

void write_ids(const std::vector<Function>& fs, std::ostream& out) {
  out << "// Generated by wrapgen from mpi_functions.txt. Do not edit.\n#pragma once\n\n"
         "#include <cstdint>\n\n"
         "/// Function ids of the trace format, named without the MPI_ prefix (fn::Send).\n"
         "namespace commgauge::trace::fn {\n";
  for (const Function& f : fs)
    out << "inline constexpr std::uint32_t " << f.name << " = " << f.id << ";\n";
  out << "}  // namespace commgauge::trace::fn\n";
}

// ---- C ----

void write_c_modeled(const Function& f, std::ostream& out) {
  const std::string lang = "commgauge::tracer::Lang::c";
  out << "  commgauge::tracer::Call call(" << f.id << ", " << lang
      << (kPoll.count(f.pattern) ? ", commgauge::tracer::kPollCall" : "") << ");\n"
      << "  call.set_site(__builtin_return_address(0));\n";
  for (const Param& p : f.params) {
    if (p.type == "MPI_Status*")
      out << "  MPI_Status cg_status;\n  if (" << p.name << " == MPI_STATUS_IGNORE) " << p.name
          << " = &cg_status;\n";
    if (p.type == "MPI_Status[]")
      out << "  if (" << p.name << " == MPI_STATUSES_IGNORE) " << p.name
          << " = commgauge::tracer::scratch_statuses(" << array_length(f) << ");\n";
  }
  if (kRequestBefore.count(f.pattern)) out << "  const MPI_Request cg_request_before = *request;\n";
  if (kRequestArrayBefore.count(f.pattern))  // small arrays (polls) copied on the stack
    out << "  MPI_Request cg_small[8];\n"
        << "  const MPI_Request* cg_requests_before = commgauge::tracer::snapshot_requests("
        << "array_of_requests, " << array_length(f) << ", cg_small);\n";
  if (f.pattern == "mrecv" || f.pattern == "imrecv")
    out << "  const MPI_Message cg_message_before = *message;\n";
  if (f.pattern == "comm_free") out << "  const MPI_Comm cg_comm_before = *comm;\n";
  out << receive_buffer_look_local(f, "");
  out << "  call.begin();\n  const int rc = PMPI_" << f.name << "(" << join_names(f) << ");\n"
      << "  call.finish(rc);\n  commgauge::tracer::hooks::" << f.pattern << "(call";
  for (const Param& p : f.params)
    out << ", " << p.name;
  for (const std::string& e : extras(f))
    out << ", " << e;
  out << ");\n  return rc;\n";
}

/// The opaque recorder's view: communicator, first (count, datatype) pair, created request.
struct OpaqueView {
  std::string comm = "MPI_COMM_NULL";
  std::string count = "0";
  std::string datatype = "MPI_DATATYPE_NULL";
  std::string request = "nullptr";
};

OpaqueView opaque_view(const Function& f) {
  OpaqueView v;
  for (std::size_t i = 0; i < f.params.size(); ++i) {
    const Param& p = f.params[i];
    if (p.type == "MPI_Comm" && v.comm == "MPI_COMM_NULL") v.comm = p.name;
    if (p.type == "int" && i + 1 < f.params.size() && f.params[i + 1].type == "MPI_Datatype" &&
        v.count == "0") {
      v.count = p.name;
      v.datatype = f.params[i + 1].name;
    }
    if (p.type == "MPI_Request*") v.request = p.name;
  }
  return v;
}

void write_c(const std::vector<Function>& fs, std::ostream& out) {
  out << "// Generated by wrapgen from mpi_functions.txt. Do not edit.\n"
         "#include <mpi.h>\n\n#include \"tracer/hooks.hpp\"\n\n";
  for (const Function& f : fs) {
    if (f.klass == "special" || f.fortran == "Fonly") continue;
    const std::string forward = "PMPI_" + f.name + "(" + join_names(f) + ")";
    out << "COMMGAUGE_C_EXPORT int MPI_" << f.name << "(" << c_params(f) << ") {\n"
        << "  if (!commgauge::tracer::tracing()) return " << forward << ";\n";
    if (f.klass == "local") {
      out << "  commgauge::tracer::LocalCall call(" << f.id << ");\n  return " << forward << ";\n";
    } else if (f.klass == "opaque") {
      const OpaqueView v = opaque_view(f);
      out << "  commgauge::tracer::Call call(" << f.id << ", commgauge::tracer::Lang::c);\n"
          << "  call.set_site(__builtin_return_address(0));\n"
          << "  call.begin();\n  const int rc = " << forward << ";\n  call.finish(rc);\n"
          << "  commgauge::tracer::hooks::opaque(call, " << v.comm << ", " << v.count << ", "
          << v.datatype << ", " << v.request << ");\n  return rc;\n";
    } else {
      write_c_modeled(f, out);
    }
    out << "}\n\n";
  }
}

// ---- Fortran ----

/// Number of hidden character-length arguments gfortran appends.
int hidden_lengths(const Function& f) {
  return static_cast<int>(std::count_if(f.params.begin(), f.params.end(), [](const Param& p) {
    return p.type.find("char") != std::string::npos;
  }));
}

std::string f_params(const Function& f, bool with_types) {
  std::string s;
  auto add = [&](const std::string& type, const std::string& name) {
    s += (s.empty() ? "" : ", ") + (with_types ? type + " " : std::string()) + name;
  };
  for (const Param& p : f.params)
    add("MPI_Fint*", "f_" + p.name);
  add("MPI_Fint*", "ierr");
  for (int i = 0; i < hidden_lengths(f); ++i)
    add("std::size_t", "len" + std::to_string(i));
  return s;
}

std::string f_pointer_type(const Function& f) {
  std::string s = "void (*)(";
  bool first = true;
  for (std::size_t i = 0; i < f.params.size() + 1; ++i) {
    s += (first ? "" : ", ") + std::string("MPI_Fint*");
    first = false;
  }
  for (int i = 0; i < hidden_lengths(f); ++i)
    s += ", std::size_t";
  return s + ")";
}

/// Declarations converting the Fortran arguments of a modeled function to C values; `pre` is
/// emitted before the call, `post` after it.
void fortran_conversions(const Function& f, std::string& pre, std::string& post,
                         std::vector<std::string>& call_args, std::vector<std::string>& hook_args) {
  const std::string n = (has_param(f, "count") || has_param(f, "incount")) ? array_length(f) : "";
  for (const Param& p : f.params) {
    const std::string fp = "f_" + p.name;
    const std::string cp = "c_" + p.name;
    std::string arg = fp;  // what the real function receives
    std::string hook = cp;
    const std::string& t = p.type;
    if (t == "int") {
      pre += "  const int " + cp + " = static_cast<int>(*" + fp + ");\n";
    } else if (t == "MPI_Comm" || t == "MPI_Datatype" || t == "MPI_Op" || t == "MPI_Info" ||
               t == "MPI_Group") {
      const std::string kind = t == "MPI_Datatype" ? "Type" : t.substr(4);
      pre += "  const " + t + " " + cp + " = PMPI_" + kind + "_f2c(*" + fp + ");\n";
    } else if (t == "const void*" || t == "void*") {
      pre += "  void* " + cp + " = commgauge::tracer::fortran_buffer(" + fp + ");\n";
    } else if (t == "const int[]") {
      hook = "reinterpret_cast<const int*>(" + fp + ")";
    } else if (t == "int[]") {  // array_of_indices, *outcount entries
      post += "  int* " + cp + " = commgauge::tracer::c_indices(" + fp + ", c_outcount);\n";
    } else if (t == "int*") {
      const bool index = p.name == "index";
      post +=
          "  int " + cp + " = " +
          (index ? "commgauge::tracer::c_index(*" + fp + ")" : "static_cast<int>(*" + fp + ")") +
          ";\n";
      hook = "&" + cp;
    } else if (t == "MPI_Request*") {
      if (kRequestBefore.count(f.pattern))
        pre += "  const MPI_Request cg_request_before = PMPI_Request_f2c(*" + fp + ");\n";
      post += "  MPI_Request " + cp + " = PMPI_Request_f2c(*" + fp + ");\n";
      hook = "&" + cp;
    } else if (t == "MPI_Request[]") {
      if (kRequestArrayBefore.count(f.pattern))
        pre += "  const MPI_Request* cg_requests_before = commgauge::tracer::c_requests(" + fp +
               ", static_cast<int>(*f_" + n + "), 0);\n";
      post += "  MPI_Request* " + cp + " = commgauge::tracer::c_requests(" + fp +
              ", static_cast<int>(*f_" + n + "), 1);\n";
    } else if (t == "MPI_Status*") {
      pre += "  MPI_Fint* s_" + p.name + " = commgauge::tracer::fortran_status(" + fp + ");\n";
      arg = "s_" + p.name;
      post += "  MPI_Status " + cp + ";\n  PMPI_Status_f2c(s_" + p.name + ", &" + cp + ");\n";
      hook = "&" + cp;
    } else if (t == "const MPI_Status*") {
      pre += "  MPI_Status " + cp + ";\n  PMPI_Status_f2c(" + fp + ", &" + cp + ");\n";
      hook = "&" + cp;
    } else if (t == "MPI_Status[]") {
      pre += "  MPI_Fint* s_" + p.name + " = commgauge::tracer::fortran_statuses(" + fp +
             ", static_cast<int>(*f_" + n + "));\n";
      arg = "s_" + p.name;
      post += "  MPI_Status* " + cp + " = commgauge::tracer::c_statuses(s_" + p.name +
              ", static_cast<int>(*f_" + n + "));\n";
    } else if (t == "MPI_Comm*") {
      if (f.pattern == "comm_free")
        pre += "  const MPI_Comm cg_comm_before = PMPI_Comm_f2c(*" + fp + ");\n";
      post += "  MPI_Comm " + cp + " = PMPI_Comm_f2c(*" + fp + ");\n";
      hook = "&" + cp;
    } else if (t == "MPI_Message*") {
      if (f.pattern == "mrecv" || f.pattern == "imrecv")
        pre += "  const MPI_Message cg_message_before = PMPI_Message_f2c(*" + fp + ");\n";
      post += "  MPI_Message " + cp + " = PMPI_Message_f2c(*" + fp + ");\n";
      hook = "&" + cp;
    } else if (t == "const MPI_Datatype[]") {
      post += "  const MPI_Datatype* " + cp + " = commgauge::tracer::c_datatypes(" + fp +
              ", c_comm, " + (p.name.rfind("send", 0) == 0 ? "0" : "1") + ");\n";
    } else {
      throw std::runtime_error("MPI_" + f.name + ": no Fortran conversion for type " + t);
    }
    call_args.push_back(arg);
    hook_args.push_back(hook);
  }
}

void write_fortran(const std::vector<Function>& fs, std::ostream& out) {
  out << "// Generated by wrapgen from mpi_functions.txt. Do not edit.\n"
         "#include <mpi.h>\n\n#include <cstddef>\n\n#include \"tracer/hooks.hpp\"\n\n"
         "static_assert(sizeof(MPI_Fint) == sizeof(int), \"MPI_Fint must be int\");\n\n";
  for (const Function& f : fs) {
    if (f.klass == "special" || f.fortran == "-") continue;
    const std::string fname = lower(f.name);
    out << "COMMGAUGE_FORTRAN_EXPORT void mpi_" << fname << "_(" << f_params(f, true) << ") {\n"
        << "  using Real = " << f_pointer_type(f) << ";\n"
        << "  static const Real real = commgauge::tracer::fortran_symbol<Real>(\"pmpi_" << fname
        << "_\");\n";
    const std::string forward_all = "real(" + f_params(f, false) + ")";
    out << "  if (!commgauge::tracer::tracing()) return " << forward_all << ";\n";
    if (f.klass == "local") {
      out << "  commgauge::tracer::LocalCall call(" << f.id << ");\n  " << forward_all << ";\n";
    } else if (f.klass == "opaque") {
      const OpaqueView v = opaque_view(f);
      auto conv = [&](const std::string& name, const std::string& fn, const std::string& none) {
        return name == none || name == "0" || name == "nullptr" ? none : fn + "(*f_" + name + ")";
      };
      out << "  commgauge::tracer::Call call(" << f.id << ", commgauge::tracer::Lang::fortran);\n"
          << "  call.set_site(__builtin_return_address(0));\n"
          << "  call.begin();\n  " << forward_all << ";\n  call.finish(*ierr);\n";
      if (v.request != "nullptr")
        out << "  MPI_Request c_request = PMPI_Request_f2c(*f_" << v.request << ");\n";
      out << "  commgauge::tracer::hooks::opaque(call, "
          << conv(v.comm, "PMPI_Comm_f2c", "MPI_COMM_NULL") << ", "
          << (v.count == "0" ? "0" : "static_cast<int>(*f_" + v.count + ")") << ", "
          << conv(v.datatype, "PMPI_Type_f2c", "MPI_DATATYPE_NULL") << ", "
          << (v.request == "nullptr" ? "nullptr" : "&c_request") << ");\n";
    } else {
      std::string pre, post;
      std::vector<std::string> call_args, hook_args;
      fortran_conversions(f, pre, post, call_args, hook_args);
      out << "  commgauge::tracer::Call call(" << f.id << ", commgauge::tracer::Lang::fortran"
          << (kPoll.count(f.pattern) ? ", commgauge::tracer::kPollCall" : "") << ");\n"
          << "  call.set_site(__builtin_return_address(0));\n"
          << pre << receive_buffer_look_local(f, "c_") << "  call.begin();\n  real(";
      for (const std::string& a : call_args)
        out << a << ", ";
      out << "ierr";
      for (int i = 0; i < hidden_lengths(f); ++i)
        out << ", len" << i;
      out << ");\n  call.finish(*ierr);\n"
          << post << "  commgauge::tracer::hooks::" << f.pattern << "(call";
      for (const std::string& a : hook_args)
        out << ", " << a;
      for (const std::string& e : extras(f))
        out << ", " << e;
      out << ");\n";
    }
    out << "}\n\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: wrapgen table|ids|c|fortran LIST OUT\n";
    return 2;
  }
  try {
    const std::string mode = argv[1];
    const auto functions = read_list(argv[2]);
    std::ostringstream text;
    if (mode == "table")
      write_table(functions, text);
    else if (mode == "ids")
      write_ids(functions, text);
    else if (mode == "c")
      write_c(functions, text);
    else if (mode == "fortran")
      write_fortran(functions, text);
    else
      throw std::runtime_error("unknown mode " + mode);
    // Rewrite only on change, so the build does not recompile unchanged wrappers.
    std::ifstream old(argv[3]);
    std::stringstream old_text;
    old_text << old.rdbuf();
    if (!old || old_text.str() != text.str()) {
      std::ofstream out(argv[3]);
      out << text.str();
      if (!out) throw std::runtime_error(std::string(argv[3]) + ": cannot write");
    }
  } catch (const std::exception& e) {
    std::cerr << "wrapgen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
