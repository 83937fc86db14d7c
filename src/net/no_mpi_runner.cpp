#include "common/error.hpp"
#include "net/group.hpp"
#include "net/launch.hpp"

namespace commgauge::net {

std::unique_ptr<PairRunner> make_mpi_runner(const TransportOptions&, int&, char**&) {
  throw InputError("transport mpi",
                   "this commgauge was built without MPI; rebuild with Open MPI installed "
                   "(scripts/setup) or use --transport tcp");
}

std::unique_ptr<Group> make_mpi_group(int&, char**&, std::chrono::milliseconds,
                                      const std::string&) {
  throw InputError("transport mpi",
                   "this commgauge was built without MPI; rebuild with Open MPI installed "
                   "(scripts/setup) or use --transport tcp");
}

std::string mpi_library_built_with() {
  return "no MPI";
}

void abort_mpi_group(const char*, int) noexcept {}

}  // namespace commgauge::net
