#include <mpi.h>

#include <time.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "net/launch.hpp"
#include "net/mpi/mpi_group.hpp"
#include "net/mpi/mpi_tool_info.hpp"
#include "net/mpi/mpi_transport.hpp"

namespace commgauge::net {

namespace {

// Ranks outside the pair skip its runs and then wait for the pair's source, asleep: ranks that
// busy-poll in MPI would take the measuring ranks' cores.
constexpr int kReleaseTag = 0x6367;

class MpiRunner final : public PairRunner {
 public:
  MpiRunner(const TransportOptions& options, int& argc, char**& argv)
      : environment_(argc, argv, options.mpi_call_limit, options.mpi_thread_level),
        clock_(options.clock),
        transport_(std::make_unique<MpiTransport>(
            options.source, options.dest, make_mpi_clock(options.clock), environment_.watchdog())) {
  }
  ~MpiRunner() override { release_or_wait(); }
  MpiRunner(const MpiRunner&) = delete;
  MpiRunner& operator=(const MpiRunner&) = delete;

  bool reports() const override {
    return transport_->in_pair() && transport_->role() == Role::source;
  }
  const Clock& source_clock() override { return transport_->clock(); }
  void run(const Job&, const std::function<void(Transport&)>& fn) override {
    if (transport_->in_pair()) fn(*transport_);
  }
  void fail(const char* message, int status) noexcept override { abort_mpi_group(message, status); }
  std::vector<std::string> hosts() const override {
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(name, &len);
    std::vector<char> all(static_cast<std::size_t>(environment_.world_size()) *
                          MPI_MAX_PROCESSOR_NAME);
    const CallWatchdog::Call call(environment_.watchdog(), -1, "MPI_Allgather",
                                  CallWatchdog::kPhaseBoundaryScale);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
                  MPI_CHAR, MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (int r = 0; r < environment_.world_size(); ++r)
      out.emplace_back(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
    return out;
  }
  void select_pair(int source, int dest) override {
    release_or_wait();
    transport_.reset();
    transport_ = std::make_unique<MpiTransport>(source, dest, make_mpi_clock(clock_),
                                                environment_.watchdog());
  }

 private:
  // The pair's source releases every rank outside the pair; those wait for it, asleep. That wait
  // lasts the whole measurement, so the call limit cannot bound it: if the source stops, the
  // dest's bounded calls end the job (mpirun then ends every rank).
  void release_or_wait() noexcept {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!transport_ || finalized) return;
    const int source = transport_->source_rank(), dest = transport_->dest_rank();
    const int me = transport_->rank();
    if (me == source) {
      for (int r = 0; r < environment_.world_size(); ++r) {
        if (r != source && r != dest)
          MPI_Send(nullptr, 0, MPI_BYTE, r, kReleaseTag, MPI_COMM_WORLD);
      }
    } else if (me != dest) {
      int arrived = 0;
      while (!arrived) {
        MPI_Iprobe(source, kReleaseTag, MPI_COMM_WORLD, &arrived, MPI_STATUS_IGNORE);
        if (!arrived) {
          const timespec pause{0, 1'000'000};  // 1 ms
          nanosleep(&pause, nullptr);
        }
      }
      MPI_Recv(nullptr, 0, MPI_BYTE, source, kReleaseTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }

  MpiEnvironment environment_;
  std::string clock_;
  std::unique_ptr<MpiTransport> transport_;
};

// MpiGroup with MPI initialised before it and finalised after it.
class OwningMpiGroup final : public Group {
 public:
  OwningMpiGroup(int& argc, char**& argv, std::chrono::milliseconds call_limit,
                 const std::string& thread_level)
      : environment_(argc, argv, call_limit, thread_level), group_(environment_.watchdog()) {}
  int rank() const override { return group_.rank(); }
  int size() const override { return group_.size(); }
  const std::vector<std::string>& hosts() const override { return group_.hosts(); }
  void barrier() override { group_.barrier(); }
  void send(int to, std::size_t bytes) override { group_.send(to, bytes); }
  int recv_any(std::size_t bytes) override { return group_.recv_any(bytes); }
  double now_us() override { return group_.now_us(); }
  std::vector<std::vector<double>> gather(const std::vector<double>& mine) override {
    return group_.gather(mine);
  }
  nlohmann::json context() const override { return group_.context(); }

 private:
  MpiEnvironment environment_;
  MpiGroup group_;
};

}  // namespace

std::unique_ptr<Group> make_mpi_group(int& argc, char**& argv, std::chrono::milliseconds call_limit,
                                      const std::string& thread_level) {
  return std::make_unique<OwningMpiGroup>(argc, argv, call_limit, thread_level);
}

std::string mpi_library_built_with() {
  return mpi_library_version();
}

void abort_mpi_group(const char* message, int status) noexcept {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "commgauge: rank %d: %s\n", rank, message);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, status);
}

std::unique_ptr<PairRunner> make_mpi_runner(const TransportOptions& options, int& argc,
                                            char**& argv) {
  return std::make_unique<MpiRunner>(options, argc, argv);
}

}  // namespace commgauge::net
