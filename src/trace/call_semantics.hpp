#pragma once
// What an MPI call does, once for every reader of a trace (the replay, trace-check, the SimGrid
// exporter, the summary): derived from the function table (mpi_functions.txt: class and
// recorder pattern), so that a call has one meaning wherever a trace is read.

#include <cstdint>

#include "collectives/intercomm.hpp"
#include "trace/format.hpp"
#include "trace/functions.hpp"

namespace commgauge::trace {

enum class CallKind : std::uint8_t {
  none,  // local calls, and modeled ones without a cost of their own (Comm_idup,
         // Comm_create_group, Intercomm_create/merge, Test_cancelled)
  init,
  finalize,
  abort,
  send,
  isend,
  recv,
  irecv,
  sendrecv,
  send_init,
  recv_init,
  start,
  wait,       // Wait, Waitall
  wait_some,  // Waitany, Waitsome
  test,       // Test, Testall, Testany, Testsome
  probe,      // Probe, Mprobe
  iprobe,     // Iprobe, Improbe
  mrecv,
  imrecv,
  cancel,
  request_free,
  collective,     // every member of the communicator calls it (blocking, or I* with a request)
  comm_creation,  // a communicator made by all members of a parent (Comm_dup, Comm_split, ...)
  comm_free,
  opaque,  // communicates, but is not modeled: the trace is incomplete
};

struct CallSemantics {
  CallKind kind = CallKind::none;
  bool completes_requests = false;  // the Wait and Test families and Request_free
  bool collective = false;          // kind collective
};

/// The semantics of a function id (kind none for an id this build does not know).
const CallSemantics& semantics_of(std::uint32_t function);
/// The same for a table entry.
CallSemantics semantics_of(const FunctionInfo& f);

/// The caller's part in a rooted intercommunicator collective, from the root it recorded
/// (MPI_ROOT, MPI_PROC_NULL or the root's world rank).
inline collectives::InterRole inter_role(std::int32_t recorded_root) {
  return recorded_root == kRootSelf   ? collectives::InterRole::root
         : recorded_root == kProcNull ? collectives::InterRole::idle
                                      : collectives::InterRole::receiver;
}

}  // namespace commgauge::trace
