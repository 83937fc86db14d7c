#include "net/mpi/mpi_group.hpp"

#include <climits>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge::net {

MpiGroup::MpiGroup(CallWatchdog& watchdog) : watchdog_(&watchdog) {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<std::size_t>(size_) * MPI_MAX_PROCESSOR_NAME);
  const CallWatchdog::Call call(*watchdog_, -1, "MPI_Allgather", CallWatchdog::kPhaseBoundaryScale);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
                MPI_CHAR, MPI_COMM_WORLD);
  for (int r = 0; r < size_; ++r) {
    hosts_.emplace_back(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
  }
}

void MpiGroup::send(int to, std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) throw InputError("message too large for MPI");
  if (buffer_.size() < bytes) buffer_.resize(bytes);
  const CallWatchdog::Call call(*watchdog_, to);
  MPI_Send(buffer_.data(), static_cast<int>(bytes), MPI_BYTE, to, 7, MPI_COMM_WORLD);
}

int MpiGroup::recv_any(std::size_t bytes) {
  if (buffer_.size() < bytes) buffer_.resize(bytes);
  MPI_Status status;
  const CallWatchdog::Call call(*watchdog_, -1);
  MPI_Recv(buffer_.data(), static_cast<int>(bytes), MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD,
           &status);
  return status.MPI_SOURCE;
}

std::vector<std::vector<double>> MpiGroup::gather(const std::vector<double>& mine) {
  const int n = static_cast<int>(mine.size());
  std::vector<double> all(rank_ == 0 ? mine.size() * static_cast<std::size_t>(size_) : 0);
  const CallWatchdog::Call call(*watchdog_, -1);
  MPI_Gather(mine.data(), n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<std::vector<double>> out;
  if (rank_ != 0) return out;
  for (int r = 0; r < size_; ++r) {
    out.emplace_back(all.begin() + r * n, all.begin() + (r + 1) * n);
  }
  return out;
}

nlohmann::json MpiGroup::context() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string lib(text, static_cast<std::size_t>(len));
  lib = lib.substr(0, lib.find_first_of("\r\n,"));
  return {{"transport", "mpi"}, {"hosts", hosts_}, {"mpi_library", lib}, {"world_size", size_}};
}

}  // namespace commgauge::net
