#pragma once
// One interface for every measurement method (DESIGN.md, src/net/): MPI, TCP and the virtual
// network implement it, and a method cannot tell them apart.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/clock.hpp"

namespace commgauge::net {

/// Which end of the measured pair this process is (seed 002's names): the source times.
enum class Role { source, dest };

std::string to_string(Role r);

/// A nonblocking operation started by isend or irecv; completed by wait or a successful test.
struct Request {
  std::int64_t id = -1;
  bool active() const { return id >= 0; }
};

/// Messages and bytes sent by this endpoint through send, isend and send_value
/// (barriers are not counted). Methods report them as their cost.
struct Counters {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
};

/// A function's first call in this process against its second (the library's one-time work:
/// code loaded on first use, lazy initialization), measured right after MPI_Init.
struct FirstCall {
  std::string function;  ///< "MPI_Bcast"
  double first_us = 0;   ///< the process's first call
  double second_us = 0;  ///< a later call: the least of 3 more passes over the same functions
  /// Both ranks of the pair lost their cores during one of the two (involuntary context
  /// switches), each more than a tenth of the time: each polled while the other was away, so
  /// even the lesser CPU time holds the scheduler's time, not the library's; not to be used.
  /// (One rank's loss is out of its own CPU time.)
  bool preempted = false;
};

class Transport {
 public:
  virtual ~Transport() = default;

  /// "mpi", "tcp" or "virtual".
  virtual std::string kind() const = 0;
  virtual Role role() const = 0;
  /// This endpoint's rank (the MPI world rank; 0 = source, 1 = dest elsewhere) and its peer's.
  virtual int rank() const = 0;
  virtual int peer() const = 0;

  /// Blocking send and receive of `bytes` bytes to and from the peer, in order.
  /// A receive must be posted for exactly the size that was sent.
  virtual void send(std::size_t bytes) = 0;
  virtual void recv(std::size_t bytes) = 0;
  /// Nonblocking forms; every request must be completed by wait or a successful test.
  virtual Request isend(std::size_t bytes) = 0;
  virtual Request irecv(std::size_t bytes) = 0;
  virtual void wait(Request& request) = 0;  ///< completes and deactivates the request
  virtual bool test(Request& request) = 0;  ///< true (and deactivates) if it completed

  /// Synchronises the two endpoints of the pair.
  virtual void barrier() = 0;

  /// Collectives over the pair, both ends calling them: an allreduce of `bytes` and an alltoall
  /// of `bytes` per peer (the held-out validation's real collectives). Transports without
  /// collectives of their own return false and do nothing.
  virtual bool allreduce(std::size_t bytes) {
    (void)bytes;
    return false;
  }
  virtual bool alltoall(std::size_t bytes) {
    (void)bytes;
    return false;
  }
  /// `count` communicators made from the pair's (MPI_Comm_dup), held until comm_free_all frees
  /// them (MPI_Comm_free); both ends call both. False where the transport has no communicators.
  virtual bool comm_dup(std::uint32_t count) {
    (void)count;
    return false;
  }
  virtual bool comm_free_all() { return false; }
  /// The library's local reduction (MPI_Reduce_local of `bytes` / 8 doubles with MPI_SUM), on
  /// this end only; false where the transport has no reduction operations.
  virtual bool reduce_local(std::size_t bytes) {
    (void)bytes;
    return false;
  }
  /// The same reduction written into the buffer isend sends from (what a reduction step that
  /// combines into the data it has just sent does); false where there are no reductions.
  virtual bool reduce_local_into_send_buffer(std::size_t bytes) {
    (void)bytes;
    return false;
  }
  /// A memory copy (memcpy, as MPI libraries copy) of the data the last irecv received into the
  /// buffer isend sends from (what coll/base does when it copies a result back into the vector
  /// it has just sent); false where the transport cannot.
  virtual bool copy_into_send_buffer(std::size_t bytes) {
    (void)bytes;
    return false;
  }
  /// Writes the first `bytes` of the buffer isend sends from, on this end (what a program does
  /// when it computes the data it then sends: the lines are then modified in this core's
  /// cache); false where the transport cannot.
  virtual bool write_send_buffer(std::size_t bytes) {
    (void)bytes;
    return false;
  }
  /// A blocking receive of `bytes` into anonymous memory mapped for it and never touched (what
  /// a program's first receive into a freshly allocated buffer does: the receive's writes fault
  /// the pages in), unmapped afterwards; with 0 bytes only whether the transport can. False
  /// where it cannot.
  virtual bool recv_into_fresh_memory(std::size_t bytes) {
    (void)bytes;
    return false;
  }
  /// A message of `bytes` to oneself: a receive from this process posted, a send to it, both
  /// waited for (MPI_Irecv, MPI_Isend, MPI_Waitall); with 0 bytes only whether the transport
  /// can. False where it cannot (a transport between two endpoints only).
  virtual bool self_message(std::size_t bytes) {
    (void)bytes;
    return false;
  }
  /// Whether irecv_into_send_buffer is available.
  virtual bool receives_into_send_buffer() const { return false; }
  /// A receive into the buffer isend sends from (what a collective's step does when it
  /// receives a block into the one it sent earlier in the call); completed by wait. No isend
  /// from that buffer may be pending. Throws TransportError where receives_into_send_buffer()
  /// is false.
  virtual Request irecv_into_send_buffer(std::size_t bytes);

  /// Time on this transport's clock, microseconds.
  virtual double now_us() = 0;
  /// Busy work for `us` microseconds that advances this transport's clock: a spin against
  /// now_us() on real transports, a clock step on the virtual one. Never a sleep.
  virtual void compute(double us) = 0;

  /// An 8-byte message that carries a value (e.g. the npp the source chose); costed as any
  /// 8-byte message, used outside timed regions.
  virtual void send_value(std::uint64_t value) = 0;
  virtual std::uint64_t recv_value() = 0;

  virtual const Clock& clock() const = 0;
  virtual Counters counters() const = 0;

  /// Frees the message buffers, which grow to the largest message and are made again by the
  /// next call: a method's report need not hold them (after a 1 MiB latency sweep the rank's
  /// resident set fell by 0.4 MiB, toward latency's 20 MiB). Never while a request is pending.
  virtual void release_buffers() {}

  /// What the first calls of a process cost (MPI: measured when MPI was initialized, before
  /// any other call); empty where a transport has no such calls.
  virtual std::vector<FirstCall> first_calls() const { return {}; }

  /// Where the measurement ran: {"transport", "hosts": [source, dest], ...library details}.
  virtual nlohmann::json context() const = 0;
};

/// Spins until `us` microseconds have passed on `clock` (the real transports' compute()).
void spin_for(const Clock& clock, double us);

}  // namespace commgauge::net
