#include "net/launch.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "net/virtual_network.hpp"

namespace commgauge::net {

namespace {

class VirtualRunner final : public PairRunner {
 public:
  explicit VirtualRunner(const model::LinkParams& link) : network_(link) {}
  bool reports() const override { return true; }
  const Clock& source_clock() override { return clock_; }
  void run(const Job&, const std::function<void(Transport&)>& fn) override { network_.run(fn); }

 private:
  VirtualNetwork network_;
  VirtualClock clock_;
};

class TcpRunner final : public PairRunner {
 public:
  explicit TcpRunner(const TransportOptions& options) : options_(options) {}
  bool reports() const override { return true; }
  const Clock& source_clock() override { return clock_; }
  void run(const Job& job, const std::function<void(Transport&)>& fn) override {
    TcpClientSession session({options_.peer, options_.connect_timeout, options_.io_timeout}, job);
    try {
      fn(session.transport());
    } catch (const std::exception& e) {
      session.abort(e.what());
      throw;
    }
    session.finish();
  }

 private:
  TransportOptions options_;
  SteadyClock clock_;
};

}  // namespace

void PairRunner::select_pair(int source, int dest) {
  throw InputError("source", fmt::format("this transport has one pair only (asked for ranks {} "
                                         "and {})",
                                         source, dest));
}

std::unique_ptr<PairRunner> make_runner(const TransportOptions& options, int& argc, char**& argv) {
  const bool mpi = options.kind == "mpi";
  const bool tcp = options.kind == "tcp";
  const bool virt = options.kind == "virtual";
  // The CLI checks which options go with which transport (cli/options.cpp); this is the
  // library's own contract.
  if (!mpi && !tcp && !virt)
    throw InputError(fmt::format("unknown transport \"{}\" (mpi, tcp or virtual)", options.kind));
  if (virt != options.virtual_link.has_value())
    throw InputError("link parameters are for the virtual network, and it needs them");
  if (!(options.io_timeout.count() > 0) || !(options.connect_timeout.count() > 0))
    throw InputError("the TCP time limits must be positive");
  if (virt) return std::make_unique<VirtualRunner>(*options.virtual_link);
  if (tcp) return std::make_unique<TcpRunner>(options);
  return make_mpi_runner(options, argc, argv);
}

}  // namespace commgauge::net
