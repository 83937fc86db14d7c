#pragma once
// N processes running one communication scheme together (seed 003's benchmark): blocking
// sends to any member, receives from any source, a barrier and a gather. MPI implements it
// over MPI_COMM_WORLD; the TCP implementation connects task processes through a coordinator.

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace commgauge::net {

class Group {
 public:
  virtual ~Group() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Host name of every member (the same on every member).
  virtual const std::vector<std::string>& hosts() const = 0;
  virtual void barrier() = 0;
  /// Blocking send of `bytes` to member `to`; returns when the send completed (MPI_Send
  /// semantics; over TCP when the receiver has acknowledged the whole message).
  virtual void send(int to, std::size_t bytes) = 0;
  /// Receives `bytes` from any member (MPI_ANY_SOURCE); returns the sender.
  virtual int recv_any(std::size_t bytes) = 0;
  virtual double now_us() = 0;
  /// Every member's values, on member 0 (empty elsewhere). All members pass the same count.
  virtual std::vector<std::vector<double>> gather(const std::vector<double>& mine) = 0;
  virtual nlohmann::json context() const = 0;
};

}  // namespace commgauge::net
