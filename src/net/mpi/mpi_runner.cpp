#include <mpi.h>

#include <cstdio>

#include "net/launch.hpp"
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

}  // namespace

std::unique_ptr<PairRunner> make_mpi_runner(const TransportOptions& options, int& argc,
                                            char**& argv) {
  return std::make_unique<MpiRunner>(options, argc, argv);
}

}  // namespace commgauge::net
