#include "trace/call_semantics.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

namespace commgauge::trace {

namespace {
// Recorder patterns of the collectives (blocking and nonblocking share one: Iallreduce is
// recorded as allreduce, Scan and Exscan too).
constexpr std::string_view kCollectives[] = {
    "barrier",  "bcast",     "reduce",   "allreduce", "reduce_scatter", "reduce_scatter_block",
    "gather",   "scatter",   "gatherv",  "scatterv",  "allgather",      "allgatherv",
    "alltoall", "alltoallv", "alltoallw"};

CallKind kind_of_pattern(std::string_view p) {
  static const std::map<std::string_view, CallKind> by_pattern = {
      {"send", CallKind::send},
      {"isend", CallKind::isend},
      {"recv", CallKind::recv},
      {"irecv", CallKind::irecv},
      {"sendrecv", CallKind::sendrecv},
      {"sendrecv_replace", CallKind::sendrecv},
      {"send_init", CallKind::send_init},
      {"recv_init", CallKind::recv_init},
      {"start", CallKind::start},
      {"startall", CallKind::start},
      {"wait", CallKind::wait},
      {"waitall", CallKind::wait},
      {"waitany", CallKind::wait_some},
      {"waitsome", CallKind::wait_some},
      {"test", CallKind::test},
      {"testall", CallKind::test},
      {"testany", CallKind::test},
      {"testsome", CallKind::test},
      {"probe", CallKind::probe},
      {"mprobe", CallKind::probe},
      {"iprobe", CallKind::iprobe},
      {"improbe", CallKind::iprobe},
      {"mrecv", CallKind::mrecv},
      {"imrecv", CallKind::imrecv},
      {"cancel", CallKind::cancel},
      {"request_free", CallKind::request_free},
      // Collective over the parent communicator and blocking; Comm_idup, Comm_create_group and
      // Intercomm_create involve other groups or requests and have no cost of their own.
      {"comm_dup", CallKind::comm_creation},
      {"comm_dup_with_info", CallKind::comm_creation},
      {"comm_split", CallKind::comm_creation},
      {"comm_split_type", CallKind::comm_creation},
      {"comm_create", CallKind::comm_creation},
      {"cart_create", CallKind::comm_creation},
      {"cart_sub", CallKind::comm_creation},
      {"graph_create", CallKind::comm_creation},
      {"dist_graph_create", CallKind::comm_creation},
      {"dist_graph_create_adjacent", CallKind::comm_creation},
      {"comm_free", CallKind::comm_free},
  };
  if (const auto it = by_pattern.find(p); it != by_pattern.end()) return it->second;
  if (std::find(std::begin(kCollectives), std::end(kCollectives), p) != std::end(kCollectives))
    return CallKind::collective;
  return CallKind::none;
}
}  // namespace

CallSemantics semantics_of(const FunctionInfo& f) {
  CallSemantics s;
  switch (f.function_class) {
    case FunctionClass::opaque:
      s.kind = CallKind::opaque;
      return s;
    case FunctionClass::local:
      return s;
    case FunctionClass::special:
      if (f.pattern == "init" || f.pattern == "init_thread") s.kind = CallKind::init;
      if (f.pattern == "finalize") s.kind = CallKind::finalize;
      if (f.pattern == "abort") s.kind = CallKind::abort;
      return s;
    case FunctionClass::modeled:
      break;
  }
  s.kind = kind_of_pattern(f.pattern);
  s.completes_requests = s.kind == CallKind::wait || s.kind == CallKind::wait_some ||
                         s.kind == CallKind::test || s.kind == CallKind::request_free;
  s.collective = s.kind == CallKind::collective;
  return s;
}

const CallSemantics& semantics_of(std::uint32_t function) {
  static const std::vector<CallSemantics> table = [] {
    std::vector<CallSemantics> t;
    for (const FunctionInfo& f : function_table()) {
      if (t.size() <= f.id) t.resize(f.id + 1);
      t[f.id] = semantics_of(f);
    }
    return t;
  }();
  static const CallSemantics unknown;
  return function < table.size() ? table[function] : unknown;
}

}  // namespace commgauge::trace
