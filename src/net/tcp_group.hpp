#pragma once
// The Group over TCP, for running a scheme where MPI cannot be launched (between network
// namespaces, say). Member 0 is the coordinator: it starts one task process per task (locally,
// or with `ip netns exec NS`), serves the barrier and the gather, and holds the result; it is
// given no task. Task processes connect to it, publish a data address, and exchange messages
// directly: a message is a frame (magic, sender, length, payload) and the receiver answers with
// an acknowledgement frame when all of it has arrived, so a blocking send ends when the data is
// at the receiver, not when it left the socket buffer. A receiver reads every incoming
// connection at once, so concurrent senders share its link. Every wait is bounded by the I/O
// timeout: a missing or dead task is an error, never a hang.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>
#include <nlohmann/json.hpp>

#include "net/group.hpp"
#include "net/socket.hpp"

namespace commgauge::net {

/// Where a node's task processes run: a network namespace (empty: this one) and the address
/// they listen on for data.
struct TcpNode {
  std::string netns;
  std::string address = "127.0.0.1";
};

struct TcpGroupOptions {
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds io_timeout{20000};
  std::string coordinator_bind = "127.0.0.1";  ///< where task processes reach the coordinator
};

class TcpGroupCoordinator final : public Group {
 public:
  /// Starts one task process per entry of `task_nodes` (member k + 1 runs on node
  /// task_nodes[k]) and waits until all have connected. `job` is sent to every task (it tells
  /// them what to run). Throws TransportError if one does not come within the connect timeout.
  TcpGroupCoordinator(const std::vector<int>& task_nodes, const std::vector<TcpNode>& nodes,
                      const nlohmann::json& job, const TcpGroupOptions& o);
  ~TcpGroupCoordinator() override;

  int rank() const override { return 0; }
  int size() const override { return static_cast<int>(members_.size()) + 1; }
  const std::vector<std::string>& hosts() const override { return hosts_; }
  void barrier() override;
  void send(int, std::size_t) override;
  int recv_any(std::size_t) override;
  double now_us() override;
  std::vector<std::vector<double>> gather(const std::vector<double>& mine) override;
  nlohmann::json context() const override;

  /// Waits for every task process to exit (after the run); returns false if one failed.
  bool finish();

 private:
  struct Member;
  std::vector<std::unique_ptr<Member>> members_;
  std::vector<std::string> hosts_;
  TcpGroupOptions options_;
  nlohmann::json context_;
};

/// A task process's side (`commgauge share-task`).
class TcpGroupMember final : public Group {
 public:
  TcpGroupMember(const HostPort& coordinator, int rank, const std::string& bind_address,
                 const TcpGroupOptions& o);
  ~TcpGroupMember() override;
  /// What the coordinator asked this task to run.
  const nlohmann::json& job() const { return job_; }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::vector<std::string>& hosts() const override { return hosts_; }
  void barrier() override;
  void send(int to, std::size_t bytes) override;
  int recv_any(std::size_t bytes) override;
  double now_us() override;
  std::vector<std::vector<double>> gather(const std::vector<double>& mine) override;
  nlohmann::json context() const override { return {{"transport", "tcp"}}; }

 private:
  struct Incoming;
  int rank_;
  int size_ = 0;
  std::vector<std::string> hosts_;
  std::vector<HostPort> data_addresses_;
  TcpGroupOptions options_;
  nlohmann::json job_;
  Socket control_;
  Socket listener_;
  std::vector<Socket> outgoing_;  // by destination rank, connected lazily
  std::vector<std::unique_ptr<Incoming>> incoming_;
  std::vector<unsigned char> buffer_;
};

}  // namespace commgauge::net
