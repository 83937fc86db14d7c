#include "net/launch.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "net/virtual_network.hpp"
#include "profile/link_params_json.hpp"

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

std::unique_ptr<PairRunner> make_runner(const TransportOptions& options, int& argc, char**& argv) {
  const bool mpi = options.kind == "mpi";
  const bool tcp = options.kind == "tcp";
  const bool virt = options.kind == "virtual";
  if (!mpi && !tcp && !virt) {
    throw InputError("--transport",
                     fmt::format("expected mpi, tcp or virtual, got \"{}\"", options.kind));
  }
  if (options.peer && !tcp) throw InputError("--peer", "only applies to --transport tcp");
  if (!options.virtual_net.empty() && !virt) {
    throw InputError("--virtual-net", "only applies to --transport virtual");
  }
  if (virt && options.virtual_net.empty()) {
    throw InputError("--transport virtual", "needs --virtual-net FILE.json (link parameters)");
  }
  if (!mpi && options.clock != "steady") {
    throw InputError("--clock",
                     fmt::format("{} is only available with --transport mpi", options.clock));
  }
  if (!(options.io_timeout.count() > 0)) throw InputError("--io-timeout", "must be positive");
  if (!(options.connect_timeout.count() > 0)) {
    throw InputError("--connect-timeout", "must be positive");
  }
  if (virt) return std::make_unique<VirtualRunner>(profile::read_link_params(options.virtual_net));
  if (tcp) return std::make_unique<TcpRunner>(options);
  return make_mpi_runner(options, argc, argv);
}

}  // namespace commgauge::net
