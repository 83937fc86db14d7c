#include "net/mpi/mpi_transport.hpp"

#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <ctime>
#include <iterator>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "net/mpi/mpi_tool_info.hpp"

namespace commgauge::net {

namespace {

constexpr int kDataTag = 1;

int to_count(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    throw InputError(fmt::format("message of {} bytes exceeds MPI's int count", bytes));
  }
  return static_cast<int>(bytes);
}

// The process's first calls, measured once (by the first pair the process belongs to: only
// its first calls are first).
std::vector<FirstCall> g_first_calls;
bool g_probed = false;
constexpr int kProbeTag = 0x7c60;

// This thread's CPU time: what it ran, not what the scheduler gave others meanwhile.
double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Times this thread lost its core to another (Linux: RUSAGE_THREAD's involuntary switches,
// sched_yield's included).
long involuntary_switches() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_nivcsw;
}

// Both ranks ready, then released together: the second sends the first an empty message, the
// first answers it. Point to point, so that no collective runs before the one timed; the first
// starts its call last (after its answer), so its time holds no wait for the other's arrival.
void sync_by_messages(MPI_Comm pair, int me) {
  constexpr int kSyncTag = 0x7c61;
  if (me == 0) {
    MPI_Recv(nullptr, 0, MPI_BYTE, 1, kSyncTag, pair, MPI_STATUS_IGNORE);
    MPI_Send(nullptr, 0, MPI_BYTE, 1, kSyncTag, pair);
  } else {
    MPI_Send(nullptr, 0, MPI_BYTE, 0, kSyncTag, pair);
    MPI_Recv(nullptr, 0, MPI_BYTE, 0, kSyncTag, pair, MPI_STATUS_IGNORE);
  }
}

// A program's first call of a collective or of a communicator's creation costs far more than its
// later calls: the library loads the code of its algorithms and initializes frameworks lazily
// (Open MPI 4.1 over vader on a 2-core VM: a first MPI_Cart_create 0.6-0.9 ms where the second
// takes 6-9 us, a first MPI_Bcast 43-76 us against 1-2; docs/measurements.md). Each function's
// first call is timed once over `pair` (a communicator of two ranks), in a fixed order, each after
// both ranks are ready; then a second pass times each again, with small counts, as programs
// start. The order matters (the first collective also pays what the collectives share), so it is
// the one programs most often follow: broadcast the input, agree, reduce; communicators last.
std::vector<FirstCall> probe_first_calls(MPI_Comm pair) {
  int me = 0;
  MPI_Comm_rank(pair, &me);
  static constexpr const char* kFunctions[] = {
      "MPI_Bcast",      "MPI_Barrier",     "MPI_Allreduce", "MPI_Reduce", "MPI_Allgather",
      "MPI_Gather",     "MPI_Scatter",     "MPI_Alltoall",  "MPI_Scan",   "MPI_Comm_dup",
      "MPI_Comm_split", "MPI_Cart_create", "MPI_Comm_free"};
  constexpr std::size_t kCount = std::size(kFunctions);
  constexpr std::size_t kFree = kCount - 1;
  int in[2] = {}, out[2] = {};
  int dims[1] = {2}, periods[1] = {1};
  // Per function and pass: this rank's time, and the time it lost to the scheduler.
  struct Timed {
    double us = 0, lost_us = 0;
  };
  // The first call, then kLater passes of later calls, of which the least is kept: one undetected
  // scheduler slice (5.3 ms against 7-10 us for a second MPI_Cart_create, under two busy loops,
  // with no rank's context switch seen) falls into one pass, not into all.
  constexpr std::size_t kLater = 3, kPasses = 1 + kLater;
  std::array<std::array<Timed, kPasses>, kCount> mine{}, theirs{};
  for (std::size_t pass = 0; pass < kPasses; ++pass) {
    for (std::size_t k = 0; k < kCount; ++k) {
      MPI_Comm made = MPI_COMM_NULL, freed = MPI_COMM_NULL;
      // What MPI_Comm_free frees is made outside its timed call (in the first pass the dup's
      // first call is behind it already).
      if (k == kFree) MPI_Comm_dup(pair, &freed);
      sync_by_messages(pair, me);
      const long switches0 = involuntary_switches();
      const double cpu0 = thread_cpu_us();
      const double t0 = MPI_Wtime();
      switch (k) {
        case 0:
          MPI_Bcast(in, 1, MPI_INT, 0, pair);
          break;
        case 1:
          MPI_Barrier(pair);
          break;
        case 2:
          MPI_Allreduce(in, out, 1, MPI_INT, MPI_SUM, pair);
          break;
        case 3:
          MPI_Reduce(in, out, 1, MPI_INT, MPI_SUM, 0, pair);
          break;
        case 4:
          MPI_Allgather(in, 1, MPI_INT, out, 1, MPI_INT, pair);
          break;
        case 5:
          MPI_Gather(in, 1, MPI_INT, out, 1, MPI_INT, 0, pair);
          break;
        case 6:
          MPI_Scatter(in, 1, MPI_INT, out, 1, MPI_INT, 0, pair);
          break;
        case 7:
          MPI_Alltoall(in, 1, MPI_INT, out, 1, MPI_INT, pair);
          break;
        case 8:
          MPI_Scan(in, out, 1, MPI_INT, MPI_SUM, pair);
          break;
        case 9:
          MPI_Comm_dup(pair, &made);
          break;
        case 10:
          MPI_Comm_split(pair, 0, me, &made);
          break;
        case 11:
          MPI_Cart_create(pair, 1, dims, periods, 0, &made);
          break;
        default:
          MPI_Comm_free(&freed);
          break;
      }
      const double wall_us = (MPI_Wtime() - t0) * 1e6;
      // A time slice the scheduler took from this rank is in the wall time, not in its CPU
      // time; while it waits for its peer it polls, so its CPU time holds the rest.
      const double cpu_us = thread_cpu_us() - cpu0;
      const bool preempted = involuntary_switches() != switches0;
      if (made != MPI_COMM_NULL) MPI_Comm_free(&made);
      mine[k][pass] = {std::min(wall_us, cpu_us),
                       preempted ? std::max(0.0, wall_us - cpu_us) : 0.0};
    }
  }
  // Each rank takes the other's times (both then report the same). The lesser time of the two
  // holds the library's work and, at most, the time the other rank lost meanwhile (this one
  // polled through it): where both lost more than a tenth of that time, the call is marked.
  constexpr int kGatherTag = 0x7c62;
  constexpr int kDoubles = static_cast<int>(sizeof(mine) / sizeof(double));
  static_assert(sizeof(mine) == kCount * kPasses * sizeof(Timed) &&
                sizeof(Timed) == 2 * sizeof(double));
  MPI_Sendrecv(mine.data(), kDoubles, MPI_DOUBLE, 1 - me, kGatherTag, theirs.data(), kDoubles,
               MPI_DOUBLE, 1 - me, kGatherTag, pair, MPI_STATUS_IGNORE);
  std::vector<FirstCall> result(kCount);
  for (std::size_t k = 0; k < kCount; ++k) {
    result[k].function = kFunctions[k];
    // The least later time among the passes not marked; if all are, the least of all, marked.
    double least = std::numeric_limits<double>::infinity();
    double least_unmarked = least;
    for (std::size_t pass = 0; pass < kPasses; ++pass) {
      const Timed& a = mine[k][pass];
      const Timed& b = theirs[k][pass];
      const double us = std::min(a.us, b.us);
      const bool marked = std::min(a.lost_us, b.lost_us) > 0.1 * us;
      if (pass == 0) {
        result[k].first_us = us;
        result[k].preempted = marked;
        continue;
      }
      least = std::min(least, us);
      if (!marked) least_unmarked = std::min(least_unmarked, us);
    }
    const bool later_marked = std::isinf(least_unmarked);
    result[k].second_us = later_marked ? least : least_unmarked;
    result[k].preempted = result[k].preempted || later_marked;
  }
  return result;
}

}  // namespace

MpiEnvironment::MpiEnvironment(int& argc, char**& argv, std::chrono::milliseconds call_limit,
                               const std::string& thread_level)
    : watchdog_(std::make_unique<CallWatchdog>(call_limit, -1)) {
  // Single by default, what MPI_Init gives the programs a profile predicts: Open MPI 4.1 takes
  // its locks on every call above it, and funneled measured 0.150 against 0.104 us one-way at
  // 8 B over shared memory (docs/measurements.md). The call watchdog's thread never calls MPI,
  // like the library's own helper threads.
  const int requested = mpi_thread_level_from_string(thread_level);
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = 0;
  if (!initialized) {
    const CallWatchdog::Call call(*watchdog_, -1, "MPI_Init", CallWatchdog::kPhaseBoundaryScale);
    MPI_Init_thread(&argc, &argv, requested, &provided);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  watchdog_->set_rank(rank_);
}

MpiEnvironment::~MpiEnvironment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    const CallWatchdog::Call call(*watchdog_, -1, "MPI_Finalize",
                                  CallWatchdog::kPhaseBoundaryScale);
    MPI_Finalize();
  }
}

std::unique_ptr<Clock> make_mpi_clock(const std::string& name) {
  if (name == "steady") return std::make_unique<SteadyClock>();
  if (name == "wtime") return std::make_unique<WtimeClock>();
  throw InputError("clock", fmt::format("expected steady or wtime, got \"{}\"", name));
}

MpiTransport::MpiTransport(int source, int dest, std::unique_ptr<Clock> clock,
                           CallWatchdog& watchdog)
    : clock_(std::move(clock)), watchdog_(&watchdog) {
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    throw InputError(
        fmt::format("the MPI transport needs at least 2 ranks, this run has {}: "
                    "launch with mpirun -np 2",
                    size));
  }
  if (source < 0 || source >= size) {
    throw InputError("source",
                     fmt::format("rank {} does not exist (ranks 0-{})", source, size - 1));
  }
  if (dest < 0 || dest >= size) {
    throw InputError("dest", fmt::format("rank {} does not exist (ranks 0-{})", dest, size - 1));
  }
  if (source == dest) throw InputError("dest", "source and dest must be different ranks");
  source_ = source;
  dest_ = dest;
  const bool member = world_rank_ == source || world_rank_ == dest;
  if (size == 2 && !g_probed) {
    // The process's first calls, before any other: with two ranks both are the pair.
    const CallWatchdog::Call call(*watchdog_, -1, "the first calls after MPI_Init",
                                  CallWatchdog::kPhaseBoundaryScale);
    g_first_calls = probe_first_calls(MPI_COMM_WORLD);
    g_probed = true;
  }
  // Key the pair so that the source is rank 0 of pair_.
  {
    const CallWatchdog::Call call(*watchdog_, -1, "MPI_Comm_split",
                                  CallWatchdog::kPhaseBoundaryScale);
    MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, world_rank_ == source ? 0 : 1,
                   &pair_);
  }
  if (!member) return;
  role_ = world_rank_ == source ? Role::source : Role::dest;
  peer_world_rank_ = world_rank_ == source ? dest : source;
  peer_ = role_ == Role::source ? 1 : 0;
  if (size > 2) {
    // With more ranks, one may be outside commgauge (another program of the job) and the
    // first calls are timed by the first pair a process belongs to, after the pair's split (so
    // without what the first communicator's creation and collectives share); both members must
    // still be unprobed (profile measures one pair per link class).
    const CallWatchdog::Call call(*watchdog_, peer_world_rank_, "the first calls");
    int mine = g_probed ? 1 : 0, theirs = 0;
    MPI_Sendrecv(&mine, 1, MPI_INT, peer_, kProbeTag, &theirs, 1, MPI_INT, peer_, kProbeTag, pair_,
                 MPI_STATUS_IGNORE);
    if (mine == 0 && theirs == 0) g_first_calls = probe_first_calls(pair_);
    g_probed = true;
  }

  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  char names[2][MPI_MAX_PROCESSOR_NAME] = {};
  const CallWatchdog::Call call(*watchdog_, peer_world_rank_, "MPI_Allgather");
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                pair_);
  int version = 0;
  int subversion = 0;
  MPI_Get_version(&version, &subversion);
  int thread_level = 0;
  MPI_Query_thread(&thread_level);
  context_ = {{"transport", "mpi"},
              {"hosts", {std::string(names[0]), std::string(names[1])}},
              {"mpi_library", mpi_library_version()},
              {"mpi_standard", fmt::format("{}.{}", version, subversion)},
              {"mpi_thread_level", mpi_thread_level_name(thread_level)},
              {"world_size", size},
              {"source_rank", source},
              {"dest_rank", dest}};
  context_.update(point_to_point_layer());
}

MpiTransport::~MpiTransport() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (pair_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&pair_);
}

unsigned char* MpiTransport::send_buffer(std::size_t bytes) {
  if (send_buffer_.size() < bytes) send_buffer_.resize(bytes);
  return send_buffer_.data();
}

unsigned char* MpiTransport::recv_buffer(std::size_t bytes) {
  if (recv_buffer_.size() < bytes) recv_buffer_.resize(bytes);
  return recv_buffer_.data();
}

void MpiTransport::check_count(const MPI_Status& status, std::size_t bytes) const {
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  if (static_cast<std::size_t>(count) != bytes) {
    throw TransportError(
        fmt::format("message size mismatch: receive posted for {} bytes, the "
                    "peer sent {} bytes",
                    bytes, count));
  }
}

void MpiTransport::send(std::size_t bytes) {
  ++counters_.messages;
  counters_.bytes += bytes;
  const CallWatchdog::Call call(*watchdog_, peer_world_rank_);
  MPI_Send(send_buffer(bytes), to_count(bytes), MPI_BYTE, peer_, kDataTag, pair_);
}

void MpiTransport::recv(std::size_t bytes) {
  MPI_Status status;
  const CallWatchdog::Call call(*watchdog_, peer_world_rank_);
  MPI_Recv(recv_buffer(bytes), to_count(bytes), MPI_BYTE, peer_, kDataTag, pair_, &status);
  check_count(status, bytes);
}

void MpiTransport::release_buffers() {
  if (std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.used; })) return;
  slots_ = {};
  send_buffer_ = {};
  recv_buffer_ = {};
  last_received_ = nullptr;
  last_received_bytes_ = 0;
}

std::size_t MpiTransport::allocate_slot() {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].used) {
      slots_[i].used = true;
      return i;
    }
  }
  slots_.emplace_back();
  slots_.back().used = true;
  return slots_.size() - 1;
}

Request MpiTransport::isend(std::size_t bytes) {
  ++counters_.messages;
  counters_.bytes += bytes;
  const std::size_t slot = allocate_slot();
  MPI_Isend(send_buffer(bytes), to_count(bytes), MPI_BYTE, peer_, kDataTag, pair_,
            &slots_[slot].request);
  return {static_cast<std::int64_t>(slot)};
}

Request MpiTransport::irecv(std::size_t bytes) {
  const std::size_t slot = allocate_slot();
  Slot& s = slots_[slot];
  if (s.buffer.size() < bytes) s.buffer.resize(bytes);
  last_received_ = s.buffer.data();
  last_received_bytes_ = bytes;
  MPI_Irecv(s.buffer.data(), to_count(bytes), MPI_BYTE, peer_, kDataTag, pair_, &s.request);
  return {static_cast<std::int64_t>(slot)};
}

void MpiTransport::wait(Request& request) {
  if (!request.active()) throw TransportError("wait on an inactive request");
  Slot& s = slots_.at(static_cast<std::size_t>(request.id));
  {
    const CallWatchdog::Call call(*watchdog_, peer_world_rank_);
    MPI_Wait(&s.request, MPI_STATUS_IGNORE);
  }
  s.used = false;
  request.id = -1;
}

bool MpiTransport::test(Request& request) {
  if (!request.active()) throw TransportError("test on an inactive request");
  Slot& s = slots_.at(static_cast<std::size_t>(request.id));
  int flag = 0;
  MPI_Test(&s.request, &flag, MPI_STATUS_IGNORE);
  if (!flag) return false;
  s.used = false;
  request.id = -1;
  return true;
}

void MpiTransport::barrier() {
  const CallWatchdog::Call call(*watchdog_, peer_world_rank_);
  MPI_Barrier(pair_);
}

bool MpiTransport::allreduce(std::size_t bytes) {
  ++counters_.messages;
  counters_.bytes += bytes;
  const CallWatchdog::Call call(*watchdog_, peer_world_rank_);
  // Doubles summed, as the profile's reduction cost (reduce_local) is measured and as programs
  // mostly reduce; a size that is not whole doubles (never the profile's) reduces bytes.
  if (bytes % sizeof(double) == 0) {
    MPI_Allreduce(send_buffer(bytes), recv_buffer(bytes), to_count(bytes / sizeof(double)),
                  MPI_DOUBLE, MPI_SUM, pair_);
  } else {
    MPI_Allreduce(send_buffer(bytes), recv_buffer(bytes), to_count(bytes), MPI_BYTE, MPI_BOR,
                  pair_);
  }
  return true;
}

bool MpiTransport::alltoall(std::size_t bytes) {
  ++counters_.messages;
  counters_.bytes += bytes;
  // The pair has 2 ranks: 2 blocks of `bytes` each way.
  const CallWatchdog::Call call(*watchdog_, peer_world_rank_);
  MPI_Alltoall(send_buffer(2 * bytes), to_count(bytes), MPI_BYTE, recv_buffer(2 * bytes),
               to_count(bytes), MPI_BYTE, pair_);
  return true;
}

bool MpiTransport::reduce_local(std::size_t bytes) {
  const std::size_t doubles = bytes / sizeof(double);
  MPI_Reduce_local(send_buffer(doubles * sizeof(double)), recv_buffer(doubles * sizeof(double)),
                   to_count(doubles), MPI_DOUBLE, MPI_SUM);
  return true;
}

bool MpiTransport::reduce_local_into_send_buffer(std::size_t bytes) {
  const std::size_t doubles = bytes / sizeof(double);
  const std::size_t used = doubles * sizeof(double);
  const void* in =
      last_received_ && last_received_bytes_ >= used ? last_received_ : recv_buffer(used);
  MPI_Reduce_local(in, send_buffer(used), to_count(doubles), MPI_DOUBLE, MPI_SUM);
  return true;
}

bool MpiTransport::recv_into_fresh_memory(std::size_t bytes) {
  if (bytes == 0) return true;
  void* fresh = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (fresh == MAP_FAILED)
    throw TransportError(fmt::format("cannot map {} B for a receive into fresh memory", bytes));
  MPI_Status status;
  {
    const CallWatchdog::Call call(*watchdog_, peer_world_rank_);
    MPI_Recv(fresh, to_count(bytes), MPI_BYTE, peer_, kDataTag, pair_, &status);
  }
  ::munmap(fresh, bytes);
  check_count(status, bytes);
  return true;
}

Request MpiTransport::irecv_into_send_buffer(std::size_t bytes) {
  const std::size_t slot = allocate_slot();
  MPI_Irecv(send_buffer(bytes), to_count(bytes), MPI_BYTE, peer_, kDataTag, pair_,
            &slots_[slot].request);
  return {static_cast<std::int64_t>(slot)};
}

bool MpiTransport::copy_into_send_buffer(std::size_t bytes) {
  const unsigned char* from =
      last_received_ && last_received_bytes_ >= bytes ? last_received_ : recv_buffer(bytes);
  unsigned char* to = send_buffer(bytes);
  std::memcpy(to, from, bytes);
  // Keep the copy: the compiler must assume the buffer is read afterwards.
  asm volatile("" : : "r"(to) : "memory");
  return true;
}

bool MpiTransport::self_message(std::size_t bytes) {
  if (bytes == 0) return true;
  const int me = peer_ == 0 ? 1 : 0;  // pair_ holds the two ranks of the pair
  MPI_Request requests[2];
  MPI_Irecv(recv_buffer(bytes), to_count(bytes), MPI_BYTE, me, kDataTag, pair_, &requests[0]);
  MPI_Isend(send_buffer(bytes), to_count(bytes), MPI_BYTE, me, kDataTag, pair_, &requests[1]);
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  return true;
}

bool MpiTransport::write_send_buffer(std::size_t bytes) {
  unsigned char* data = send_buffer(bytes);
  std::memset(data, ++fill_, bytes);
  // Keep the stores: the compiler must assume the buffer is read afterwards.
  asm volatile("" : : "r"(data) : "memory");
  return true;
}

std::vector<FirstCall> MpiTransport::first_calls() const {
  return g_first_calls;
}

bool MpiTransport::comm_dup(std::uint32_t count) {
  for (std::uint32_t i = 0; i < count; ++i) {
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_dup(pair_, &dup);
    duplicates_.push_back(dup);
  }
  return true;
}

bool MpiTransport::comm_free_all() {
  for (MPI_Comm& c : duplicates_)
    MPI_Comm_free(&c);
  duplicates_.clear();
  return true;
}

void MpiTransport::send_value(std::uint64_t value) {
  ++counters_.messages;
  counters_.bytes += sizeof value;
  const CallWatchdog::Call call(*watchdog_, peer_world_rank_);
  MPI_Send(&value, static_cast<int>(sizeof value), MPI_BYTE, peer_, kDataTag, pair_);
}

std::uint64_t MpiTransport::recv_value() {
  std::uint64_t value = 0;
  MPI_Status status;
  const CallWatchdog::Call call(*watchdog_, peer_world_rank_);
  MPI_Recv(&value, static_cast<int>(sizeof value), MPI_BYTE, peer_, kDataTag, pair_, &status);
  check_count(status, sizeof value);
  return value;
}

}  // namespace commgauge::net
