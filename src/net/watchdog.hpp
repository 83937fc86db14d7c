#pragma once
// A bound on one blocking call for transports that have none of their own (MPI): a helper
// thread ends the process with exit status 3, naming the peer, when one call has waited longer
// than the limit - a stopped or dead peer is an error, never a hang. The calling thread only
// stores a counter around each call (no clock read, no locked instruction: about a nanosecond,
// far below the calls' own cost and noise).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace commgauge::net {

class CallWatchdog {
 public:
  /// The scale of the limit for a phase's collective start or end (Call's `scale`).
  static constexpr int kPhaseBoundaryScale = 10;

  /// `limit` <= 0: no thread, no bound. `me`: this process's rank, for the message (-1: not
  /// known yet, as before MPI_Init; set_rank names it later).
  CallWatchdog(std::chrono::milliseconds limit, int me);
  ~CallWatchdog();
  CallWatchdog(const CallWatchdog&) = delete;
  CallWatchdog& operator=(const CallWatchdog&) = delete;

  void set_rank(int me) noexcept { me_.store(me, std::memory_order_relaxed); }

  /// Marks one blocking call waiting for `peer` (-1: any or every other rank) while it lives
  /// (one calling thread only); `what` names it in the message (a string literal). `scale`
  /// multiplies the limit for a call that may legitimately wait while another rank works (the
  /// collective start and end of a phase: the source may still be analysing and writing).
  class Call {
   public:
    Call(CallWatchdog& w, int peer, const char* what = "one call", int scale = 1) noexcept : w_(w) {
      w_.peer_.store(peer, std::memory_order_relaxed);
      w_.what_.store(what, std::memory_order_relaxed);
      w_.scale_.store(scale, std::memory_order_relaxed);
      w_.calls_.store(w_.calls_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }
    ~Call() {
      w_.calls_.store(w_.calls_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;

   private:
    CallWatchdog& w_;
  };

 private:
  void watch();

  std::chrono::milliseconds limit_;
  std::atomic<int> me_;
  std::atomic<std::uint64_t> calls_{0};  ///< odd while a call waits
  std::atomic<int> peer_{-1};
  std::atomic<const char*> what_{"one call"};
  std::atomic<int> scale_{1};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace commgauge::net
