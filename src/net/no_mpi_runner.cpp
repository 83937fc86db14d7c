#include "common/error.hpp"
#include "net/launch.hpp"

namespace commgauge::net {

std::unique_ptr<PairRunner> make_mpi_runner(const TransportOptions&, int&, char**&) {
  throw InputError("--transport mpi",
                   "this commgauge was built without MPI; rebuild with Open MPI installed "
                   "(scripts/setup) or use --transport tcp");
}

}  // namespace commgauge::net
