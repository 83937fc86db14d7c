#pragma once
// The tracer's fast path, included by every generated wrapper: is tracing on, the clock, and
// the timing of one call. Everything slower lives in recorder.cpp.

#include <cstdint>
#include <ctime>

namespace commgauge::tracer {

enum class Lang : std::uint8_t { c, fortran };

struct PollCallTag {};
inline constexpr PollCallTag kPollCall{};

/// Set between a traced MPI_Init and MPI_Finalize (and cleared after a write error).
extern bool g_active;
/// TSC ticks (invariant TSC) or CLOCK_MONOTONIC nanoseconds, chosen at Init.
extern bool g_use_tsc;
/// Nesting depth of MPI calls on this thread: calls an MPI library makes to its own MPI_*
/// functions (MPI-IO does) pass through unrecorded, and the tracer's own calls use PMPI.
extern thread_local int t_depth __attribute__((tls_model("initial-exec")));

/// The wrappers' fast path is inlined into every wrapper.
#define COMMGAUGE_HOT inline __attribute__((always_inline))

COMMGAUGE_HOT bool tracing() {
  return g_active && t_depth == 0;
}

COMMGAUGE_HOT std::int64_t now_ticks() {
#if defined(__x86_64__) || defined(__i386__)
  if (g_use_tsc) return static_cast<std::int64_t>(__builtin_ia32_rdtsc());
#endif
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// Adds a local call's time to what the next event carries (recorder.cpp).
void note_local(std::uint32_t function, std::int64_t ticks);

/// A local MPI call (Comm_rank, Type_size...): counted and timed, never an event.
class LocalCall {
 public:
  explicit LocalCall(std::uint32_t function) : function_(function) {
    ++t_depth;
    start_ = now_ticks();
  }
  ~LocalCall() {
    const std::int64_t end = now_ticks();
    --t_depth;
    note_local(function_, end - start_);
  }
  LocalCall(const LocalCall&) = delete;
  LocalCall& operator=(const LocalCall&) = delete;

 private:
  std::uint32_t function_;
  std::int64_t start_ = 0;
};

/// Decides whether this poll call's start is timed (recorder.cpp): the first call of a run
/// and one call in 64 are; timing every poll would cost more than the poll.
bool poll_sample();

/// One recorded MPI call: begin() just before the PMPI call, finish() just after it.
class Call {
 public:
  Call(std::uint32_t function, Lang lang) : function_(function), lang_(lang) { ++t_depth; }
  Call(std::uint32_t function, Lang lang, PollCallTag)
      : function_(function), lang_(lang), poll_(true) {
    ++t_depth;
  }
  ~Call() { --t_depth; }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  COMMGAUGE_HOT void begin() { start_ = (!poll_ || poll_sample()) ? now_ticks() : -1; }
  /// An unsampled poll reads no clock at all (a failed one needs none; a successful one is
  /// timed by its recorder).
  COMMGAUGE_HOT void finish(int rc) {
    end_ = start_ >= 0 ? now_ticks() : -1;
    rc_ = rc;
  }

  /// The return address into the caller (the wrapper's __builtin_return_address(0)).
  void set_site(const void* return_address) { site_ = return_address; }
  const void* site() const { return site_; }
  std::uint32_t function() const { return function_; }
  Lang lang() const { return lang_; }
  bool poll() const { return poll_; }
  /// -1 for a poll call that was not timed.
  std::int64_t start() const { return start_; }
  std::int64_t end() const { return end_; }
  int rc() const { return rc_; }

 private:
  std::uint32_t function_;
  Lang lang_;
  bool poll_ = false;
  const void* site_ = nullptr;
  std::int64_t start_ = 0;
  std::int64_t end_ = 0;
  int rc_ = 0;
};

}  // namespace commgauge::tracer
