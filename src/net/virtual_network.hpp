#pragma once
// The virtual network: two endpoints in one process that obey the project's one cost
// convention (DESIGN.md) exactly, in virtual time. It is the known truth every estimator is
// tested against.
//
// Each endpoint runs its code in its own thread, but only one runs at a time: a small
// discrete-event engine hands control to whichever endpoint or pending event is earliest in
// virtual time (ties: events first, then endpoint 0). Runs are therefore deterministic.
//
// Semantics, per message of k bytes (costs from model::CostModel):
// * eager: the sender is busy o_s + kO_s (starting no earlier than g + (k-1)G after its
//   previous send started), the data arrives L + (k-1)G later, and the receiver is busy
//   o_r + kO_r inside a call at or after both the arrival and the posting of the receive.
// * rendezvous (seed 004 T4, T5): the sender pays o_s for a request that arrives L later; once
//   the receive is posted the receiver pays o_r + o_s to answer; the acknowledgement arrives L
//   later and the sender pays o_r, then sends the data as above.
// * eager with acknowledgement (seed 001 Tm = TA): as eager, but the send completes only when
//   the receiver's acknowledgement is back. The receiver sends it (o'_s) when it handles the
//   arrived data, posted receive or not, before it copies the data out; it arrives L later and
//   the sender takes it (o'_r). Open MPI's shared memory works so above its inline size: the
//   receiver returns each fragment, and the sender completes the send when it sees it back.
// * progress "dependent" (seed 001 DCP): answering the request and sending the data happen
//   only while the acting endpoint is inside a transport call; "independent" (ICP): they
//   happen at once, off the endpoint's CPU. The same holds for sending and taking the
//   acknowledgement of eager data. The receive-side copy always needs a call.
// * a receive copy costs o_u more when its eager data arrived before the receive was posted
//   (a rendezvous answer as much when its request did), and o_x more when its message crossed the
//   receiver's latest send (each posted before the other arrived, as in an exchange).
// * a test() that fails twice at the same virtual time waits for the next event (a spin loop
//   would otherwise never let virtual time advance).
// * a send's events are created when the send starts, so o_s + L may be negative only down to
//   the point where an arrival would precede its send's start; there it is clamped.

#include <functional>
#include <memory>

#include "model/cost.hpp"
#include "model/link_params.hpp"
#include "net/transport.hpp"

namespace commgauge::net {

class VirtualNetwork {
 public:
  explicit VirtualNetwork(const model::LinkParams& link);
  ~VirtualNetwork();
  VirtualNetwork(const VirtualNetwork&) = delete;
  VirtualNetwork& operator=(const VirtualNetwork&) = delete;

  /// Runs fn on endpoint 0 (source) and endpoint 1 (dest), each in its own thread, from
  /// virtual time 0. Returns when both have finished; rethrows the first exception raised by
  /// either (a deadlock or a failed peer is reported as TransportError, never a hang).
  /// May be called again; virtual time restarts at 0.
  void run(const std::function<void(Transport&)>& fn);

  const model::CostModel& cost() const;

  /// Messages sent from now on cost what `link` says (those under way keep their cost): a
  /// machine whose state changes during a run, such as a latency mode. Callable from an
  /// endpoint's code between its calls.
  void change_link(const model::LinkParams& link);

  class Engine;  ///< implementation detail (virtual_network.cpp)

 private:
  std::unique_ptr<Engine> engine_;
};

/// The virtual clock as user code sees it between transport calls: it stands still.
class VirtualClock final : public Clock {
 public:
  double now_us() const override { return 0.0; }
  std::string name() const override { return "virtual"; }
};

}  // namespace commgauge::net
