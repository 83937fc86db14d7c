#pragma once
// Running a method on both ends of a pair, whatever the transport: two MPI ranks, a TCP client
// and its `commgauge serve` peer, or the two threads of the virtual network.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/link_params.hpp"
#include "net/socket.hpp"
#include "net/tcp_session.hpp"
#include "net/transport.hpp"

namespace commgauge::net {

/// The transport options every measuring subcommand shares.
struct TransportOptions {
  std::string kind = "mpi";      ///< mpi | tcp | virtual
  int source = 0;                ///< MPI rank that times (seed 002's "source")
  int dest = 1;                  ///< MPI rank that answers
  std::string clock = "steady";  ///< steady | wtime (MPI only)
  std::optional<HostPort> peer;  ///< TCP peer; empty: start one on 127.0.0.1
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds io_timeout{10000};
  /// MPI: one blocking call of the pair that waits longer ends the run (exit 3); 0: no bound.
  std::chrono::milliseconds mpi_call_limit{60000};
  /// MPI: the thread level MPI_Init_thread requests (single, funneled, serialized, multiple).
  std::string mpi_thread_level = "single";
  std::optional<model::LinkParams> virtual_link;  ///< the virtual network's link (kind virtual)
};

class PairRunner {
 public:
  virtual ~PairRunner() = default;
  /// True in the process that holds the source end, the one that reports results.
  virtual bool reports() const = 0;
  /// The clock the source end times with (valid where reports() is true).
  virtual const Clock& source_clock() = 0;
  /// Runs fn on each end of the pair that lives in this process. `job` names the method and
  /// its parameters for a TCP peer, which runs its own registered code for the dest end.
  virtual void run(const Job& job, const std::function<void(Transport&)>& fn) = 0;
  /// A fatal error on this process: on MPI it prints `message` and aborts every rank with
  /// `status` (mpirun exits with it) so that none hangs; elsewhere it does nothing (the caller
  /// reports the error).
  virtual void fail(const char* /*message*/, int /*status*/) noexcept {}
  /// Every rank's host name in rank order where the runner has more ranks than its pair (MPI;
  /// collective: every rank calls it), else empty.
  virtual std::vector<std::string> hosts() const { return {}; }
  /// Measures between another pair from now on (MPI; collective: every rank calls it, in the
  /// same order). Throws InputError where the transport has one pair only.
  virtual void select_pair(int source, int dest);
};

/// Validates the option combination (throws InputError) and sets up the transport.
/// For MPI this calls MPI_Init; argc/argv are passed on to it.
std::unique_ptr<PairRunner> make_runner(const TransportOptions& options, int& argc, char**& argv);

/// The MPI runner (defined in the MPI target, or as a stub that explains MPI is not built).
std::unique_ptr<PairRunner> make_mpi_runner(const TransportOptions& options, int& argc,
                                            char**& argv);

class Group;
/// All ranks of MPI_COMM_WORLD as a Group, with MPI initialised for as long as it lives
/// (MPI target; the stub explains MPI is not built). `call_limit`: one blocking call that waits
/// longer ends the process with exit status 3 (CallWatchdog); 0: no bound.
std::unique_ptr<Group> make_mpi_group(int& argc, char**& argv, std::chrono::milliseconds call_limit,
                                      const std::string& thread_level = "single");
/// The MPI library this commgauge was built with (the first line of MPI_Get_library_version,
/// which MPI allows before MPI_Init), or "no MPI" when built without it.
std::string mpi_library_built_with();
/// Aborts every MPI rank with `status` (after this rank said why); a no-op without MPI.
void abort_mpi_group(const char* message, int status) noexcept;

}  // namespace commgauge::net
