#pragma once
// The Group over MPI_COMM_WORLD: MPI_Send, MPI_Recv with MPI_ANY_SOURCE, MPI_Barrier.

#include <mpi.h>

#include <chrono>
#include <memory>
#include <vector>

#include "net/group.hpp"
#include "net/page_aligned.hpp"
#include "net/watchdog.hpp"

namespace commgauge::net {

class MpiGroup final : public Group {
 public:
  /// MPI must be initialised. Every blocking call is bounded by `watchdog` (the environment's),
  /// which must outlive the group.
  explicit MpiGroup(CallWatchdog& watchdog);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::vector<std::string>& hosts() const override { return hosts_; }
  void barrier() override {
    const CallWatchdog::Call call(*watchdog_, -1);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  void send(int to, std::size_t bytes) override;
  int recv_any(std::size_t bytes) override;
  double now_us() override { return MPI_Wtime() * 1e6; }
  std::vector<std::vector<double>> gather(const std::vector<double>& mine) override;
  nlohmann::json context() const override;

 private:
  int rank_ = 0;
  int size_ = 1;
  std::vector<std::string> hosts_;
  PageAlignedBytes buffer_;
  CallWatchdog* watchdog_;
};

}  // namespace commgauge::net
