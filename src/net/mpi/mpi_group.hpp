#pragma once
// The Group over MPI_COMM_WORLD: MPI_Send, MPI_Recv with MPI_ANY_SOURCE, MPI_Barrier.

#include <mpi.h>

#include <vector>

#include "net/group.hpp"

namespace commgauge::net {

class MpiGroup final : public Group {
 public:
  MpiGroup();  ///< MPI must be initialised
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::vector<std::string>& hosts() const override { return hosts_; }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  void send(int to, std::size_t bytes) override;
  int recv_any(std::size_t bytes) override;
  double now_us() override { return MPI_Wtime() * 1e6; }
  std::vector<std::vector<double>> gather(const std::vector<double>& mine) override;
  nlohmann::json context() const override;

 private:
  int rank_ = 0;
  int size_ = 1;
  std::vector<std::string> hosts_;
  std::vector<unsigned char> buffer_;
};

}  // namespace commgauge::net
