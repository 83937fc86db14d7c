#pragma once
// The clocks a transport can time with. Seed 002 §3.1 characterizes whichever is selected.

#include <chrono>
#include <memory>
#include <string>

namespace commgauge::net {

class Clock {
 public:
  virtual ~Clock() = default;
  /// Microseconds since an arbitrary origin fixed when the clock was made.
  virtual double now_us() const = 0;
  /// "steady_clock", "MPI_Wtime" or "virtual".
  virtual std::string name() const = 0;
};

/// std::chrono::steady_clock (CLOCK_MONOTONIC on Linux): the default on every real transport.
class SteadyClock final : public Clock {
 public:
  SteadyClock() : origin_(std::chrono::steady_clock::now()) {}
  double now_us() const override {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - origin_)
        .count();
  }
  std::string name() const override { return "steady_clock"; }

 private:
  std::chrono::steady_clock::time_point origin_;
};

}  // namespace commgauge::net
