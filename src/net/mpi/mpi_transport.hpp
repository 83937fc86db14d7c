#pragma once
// The MPI transport: MPI_Send/MPI_Recv (and the nonblocking forms) between two chosen ranks of
// MPI_COMM_WORLD, over a communicator of just those two, so that other ranks idle correctly.

#include <mpi.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "net/page_aligned.hpp"
#include "net/transport.hpp"
#include "net/watchdog.hpp"

namespace commgauge::net {

/// MPI_Init on construction, MPI_Finalize on destruction, and the process's one call watchdog:
/// both are collective, so a rank that stopped before them (or never started) would otherwise
/// hang every other rank. `call_limit`: see CallWatchdog (0: no bound).
class MpiEnvironment {
 public:
  /// `thread_level`: what MPI_Init_thread requests, "single" (what MPI_Init gives), "funneled",
  /// "serialized" or "multiple"; throws InputError for anything else.
  MpiEnvironment(int& argc, char**& argv, std::chrono::milliseconds call_limit,
                 const std::string& thread_level = "single");
  ~MpiEnvironment();
  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;
  int world_rank() const { return rank_; }
  int world_size() const { return size_; }
  CallWatchdog& watchdog() const { return *watchdog_; }

 private:
  std::unique_ptr<CallWatchdog> watchdog_;
  int rank_ = 0;
  int size_ = 1;
};

/// MPI_Wtime, as seconds since an origin taken at construction, in microseconds.
class WtimeClock final : public Clock {
 public:
  WtimeClock() : origin_(MPI_Wtime()) {}
  double now_us() const override { return (MPI_Wtime() - origin_) * 1e6; }
  std::string name() const override { return "MPI_Wtime"; }

 private:
  double origin_;
};

/// Makes the clock named by `--clock` ("steady" or "wtime"); throws InputError otherwise.
std::unique_ptr<Clock> make_mpi_clock(const std::string& name);

class MpiTransport final : public Transport {
 public:
  /// Collective over MPI_COMM_WORLD. Ranks outside {source, dest} get in_pair() == false
  /// and must not communicate. Throws InputError for an invalid pair. Every blocking call is
  /// bounded by `watchdog` (the environment's), which must outlive the transport.
  MpiTransport(int source, int dest, std::unique_ptr<Clock> clock, CallWatchdog& watchdog);
  ~MpiTransport() override;

  bool in_pair() const { return pair_ != MPI_COMM_NULL; }
  int source_rank() const { return source_; }  ///< the pair's source, in MPI_COMM_WORLD
  int dest_rank() const { return dest_; }

  std::string kind() const override { return "mpi"; }
  Role role() const override { return role_; }
  int rank() const override { return world_rank_; }
  int peer() const override { return peer_world_rank_; }
  void send(std::size_t bytes) override;
  void recv(std::size_t bytes) override;
  Request isend(std::size_t bytes) override;
  Request irecv(std::size_t bytes) override;
  void wait(Request& request) override;
  bool test(Request& request) override;
  void barrier() override;
  bool allreduce(std::size_t bytes) override;  ///< MPI_Allreduce, doubles with MPI_SUM
  bool alltoall(std::size_t bytes) override;   ///< MPI_Alltoall, `bytes` per rank
  bool comm_dup(std::uint32_t count) override;
  /// This process's, as MpiEnvironment measured them when it initialized MPI.
  std::vector<FirstCall> first_calls() const override;
  void release_buffers() override;
  bool reduce_local(std::size_t bytes) override;  ///< MPI_Reduce_local, doubles, MPI_SUM
  bool reduce_local_into_send_buffer(std::size_t bytes) override;
  bool copy_into_send_buffer(std::size_t bytes) override;
  bool write_send_buffer(std::size_t bytes) override;
  bool receives_into_send_buffer() const override { return true; }
  bool recv_into_fresh_memory(std::size_t bytes) override;
  bool self_message(std::size_t bytes) override;  ///< in pair_, from the send buffer
  Request irecv_into_send_buffer(std::size_t bytes) override;
  bool comm_free_all() override;
  double now_us() override { return clock_->now_us(); }
  void compute(double us) override { spin_for(*clock_, us); }
  void send_value(std::uint64_t value) override;
  std::uint64_t recv_value() override;
  const Clock& clock() const override { return *clock_; }
  Counters counters() const override { return counters_; }
  nlohmann::json context() const override { return context_; }

 private:
  struct Slot {
    MPI_Request request = MPI_REQUEST_NULL;
    PageAlignedBytes buffer;  // receive buffer of this request
    bool used = false;
  };
  std::size_t allocate_slot();
  void check_count(const MPI_Status& status, std::size_t bytes) const;
  unsigned char* send_buffer(std::size_t bytes);
  unsigned char* recv_buffer(std::size_t bytes);

  MPI_Comm pair_ = MPI_COMM_NULL;
  std::vector<MPI_Comm> duplicates_;  // made by comm_dup, freed by comm_free_all
  Role role_ = Role::source;
  int world_rank_ = 0;
  int source_ = 0, dest_ = 1;
  int peer_world_rank_ = 0;
  int peer_ = 0;  // rank of the peer in pair_
  std::unique_ptr<Clock> clock_;
  Counters counters_;
  nlohmann::json context_;
  PageAlignedBytes send_buffer_;
  PageAlignedBytes recv_buffer_;
  std::vector<Slot> slots_;
  // The last irecv's buffer: reduce_local_into_send_buffer combines what arrived there, warm in
  // this rank's cache as a reduction step's received data is.
  const unsigned char* last_received_ = nullptr;
  std::size_t last_received_bytes_ = 0;
  unsigned char fill_ = 0;  // write_send_buffer's byte, new each call
  CallWatchdog* watchdog_;
};

}  // namespace commgauge::net
