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

/// Whether a call of this kind progresses communication: takes arrived messages, answers
/// rendezvous requests, acknowledges data. Open MPI's ob1 progresses in waits, tests, probes,
/// blocking point-to-point calls and collectives, not in MPI_Isend, MPI_Irecv, MPI_Start or
/// local calls: a message that arrived during computation costs MPI_Irecv 0.04 us and the
/// MPI_Wait after it 0.38-0.58 us (benchmarks/late_message_calls, docs/measurements.md).
constexpr bool progresses(CallKind k) {
  switch (k) {
    case CallKind::init:
    case CallKind::finalize:
    case CallKind::abort:
    case CallKind::send:
    case CallKind::recv:
    case CallKind::sendrecv:
    case CallKind::wait:
    case CallKind::wait_some:
    case CallKind::test:
    case CallKind::probe:
    case CallKind::iprobe:
    case CallKind::mrecv:
    case CallKind::collective:
    case CallKind::comm_creation:
    case CallKind::opaque:  // communicates in a way not modeled: assumed to progress
      return true;
    default:
      return false;
  }
}

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
