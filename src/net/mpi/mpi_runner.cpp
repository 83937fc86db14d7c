#include <mpi.h>

#include <cstdio>

#include "net/launch.hpp"
#include "net/mpi/mpi_group.hpp"
#include "net/mpi/mpi_transport.hpp"

namespace commgauge::net {

namespace {

class MpiRunner final : public PairRunner {
 public:
  MpiRunner(const TransportOptions& options, int& argc, char**& argv)
      : environment_(argc, argv),
        transport_(options.source, options.dest, make_mpi_clock(options.clock)) {}

  bool reports() const override {
    return transport_.in_pair() && transport_.role() == Role::source;
  }
  const Clock& source_clock() override { return transport_.clock(); }
  void run(const Job&, const std::function<void(Transport&)>& fn) override {
    if (transport_.in_pair()) fn(transport_);
  }
  void fail(const char* message) noexcept override {
    std::fprintf(stderr, "commgauge: rank %d: %s\n", transport_.rank(), message);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

 private:
  MpiEnvironment environment_;
  MpiTransport transport_;
};

// MpiGroup with MPI initialised before it and finalised after it.
class OwningMpiGroup final : public Group {
 public:
  OwningMpiGroup(int& argc, char**& argv) : environment_(argc, argv) {}
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

std::unique_ptr<Group> make_mpi_group(int& argc, char**& argv) {
  return std::make_unique<OwningMpiGroup>(argc, argv);
}

void abort_mpi_group(const char* message) noexcept {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "commgauge: rank %d: %s\n", rank, message);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

std::unique_ptr<PairRunner> make_mpi_runner(const TransportOptions& options, int& argc,
                                            char**& argv) {
  return std::make_unique<MpiRunner>(options, argc, argv);
}

}  // namespace commgauge::net
