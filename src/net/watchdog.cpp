#include "net/watchdog.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace commgauge::net {

CallWatchdog::CallWatchdog(std::chrono::milliseconds limit, int me) : limit_(limit), me_(me) {
  if (limit_.count() > 0) thread_ = std::thread([this] { watch(); });
}

CallWatchdog::~CallWatchdog() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CallWatchdog::watch() {
  const auto period =
      std::clamp(limit_ / 20, std::chrono::milliseconds(10), std::chrono::milliseconds(250));
  std::uint64_t seen = 0;
  auto since = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stop_; })) {
    const std::uint64_t now_calls = calls_.load(std::memory_order_acquire);
    const auto now = std::chrono::steady_clock::now();
    if (now_calls % 2 == 0 || now_calls != seen) {
      seen = now_calls;
      since = now;
      continue;
    }
    const int scale = scale_.load(std::memory_order_relaxed);
    if (now - since >= limit_ * scale) {
      const int peer = peer_.load(std::memory_order_relaxed);
      const int me = me_.load(std::memory_order_relaxed);
      const std::string whom = peer >= 0 ? "rank " + std::to_string(peer) : "the other ranks";
      const std::string who = me >= 0 ? "rank " + std::to_string(me) + ": " : "";
      const std::string bound =
          scale > 1 ? std::to_string(scale) + " x --mpi-timeout" : std::string("--mpi-timeout");
      std::fprintf(stderr,
                   "commgauge: %s%s has waited %.3g s for %s (%s): a "
                   "rank is stopped, dead or hung; ending with exit status 3\n",
                   who.c_str(), what_.load(std::memory_order_relaxed),
                   std::chrono::duration<double>(now - since).count(), whom.c_str(), bound.c_str());
      std::fflush(stderr);
      std::_Exit(3);
    }
  }
}

}  // namespace commgauge::net
