#pragma once
// The tracer's per-process state: the rank file, the communicator and request tables, the poll
// run being folded, the local-call accounting. One instance per process (recorder()).

#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trace/format.hpp"
#include "trace/writer.hpp"
#include "tracer/call_sites.hpp"
#include "tracer/handle_map.hpp"
#include "tracer/runtime.hpp"

namespace commgauge::tracer {

using trace::Completion;
using trace::Event;

extern thread_local std::uint32_t t_thread __attribute__((tls_model("initial-exec")));
std::uint32_t new_thread_number();
/// This thread's number (0: the thread that initialised MPI).
inline std::uint32_t thread_number() {
  return t_thread != UINT32_MAX ? t_thread : new_thread_number();
}

/// A communicator as the trace knows it.
struct CommInfo {
  std::uint64_t id = 0;
  bool inter = false;
  std::vector<std::int32_t> local;   ///< world rank of each rank (local group)
  std::vector<std::int32_t> remote;  ///< intercommunicator: the remote group
  std::uint64_t children = 0;        ///< creation calls made on it so far (ids of children)
};

enum class RequestKind : std::uint8_t { send, recv, collective, comm_idup, opaque };

/// What the tracer remembers of a live request.
struct RequestInfo {
  std::uint64_t id = 0;       ///< current id; a persistent request gets a new one at each Start
  std::uint64_t init_id = 0;  ///< persistent: the id its *_init call gave it
  RequestKind kind = RequestKind::send;
  bool persistent = false;
  bool active = true;
  bool cancel_requested = false;  ///< MPI_Cancel was called: its status says if it worked
  int source_rank = 0;            ///< receives: as asked for (comm rank), for translating statuses
  const CommInfo* comm = nullptr;
  MPI_Comm comm_handle = MPI_COMM_NULL;  ///< comm_idup: the new communicator
  MPI_Comm parent_handle = MPI_COMM_NULL;
};

/// Settings read from the environment at Init.
struct Settings {
  std::string directory;         ///< COMMGAUGE_TRACE_DIR; tracing is off without it
  bool cpu_time = false;         ///< COMMGAUGE_TRACE_CPU=1: thread CPU time at each event
  bool force_monotonic = false;  ///< COMMGAUGE_TRACE_CLOCK=monotonic
  /// COMMGAUGE_TRACE_FRESH_MIN_BYTES: receive buffers at least this large are looked at for
  /// pages never touched (hooks.hpp look_at_receive_buffer); 0: none. A look is one mincore system
  /// call (1.4-1.9 us on a 2-core VM), next to a receive of 64 KiB that lasts 6 us or more there.
  std::uint64_t fresh_min_bytes = 65536;
  std::uint64_t page_bytes = 4096;  ///< sysconf(_SC_PAGESIZE)
};

class Recorder {
 public:
  Recorder();
  ~Recorder();

  // ---- lifecycle (lifecycle.cpp) ----
  /// After PMPI_Init: opens the rank file and starts recording. Returns false (and records
  /// nothing) when tracing is not requested or cannot start.
  bool start(std::uint32_t init_function, std::int64_t init_start, int thread_level, Lang lang);
  /// Before PMPI_Finalize: records Finalize and the end, writes the index (rank 0), closes.
  void finish(std::uint32_t function, std::int64_t start, Lang lang);
  /// Before PMPI_Abort: records the abort and flushes what was recorded.
  void abort(std::uint32_t function, std::int64_t start, int errorcode, Lang lang);

  /// From a SIGTERM/SIGINT handler: writes the block being filled unless the signal
  /// interrupted the tracer itself (then the last whole block is what remains).
  void flush_on_signal();

  // ---- events ----
  /// The scratch event, reset and filled with the call's function, times and flags.
  Event& event(const Call& c);
  /// Writes the scratch event (after closing an open poll run).
  void emit();
  /// A record that is not an MPI call (comm_create, clock_sync, marker, end).
  Event& record(trace::RecordKind kind, std::int64_t tick);
  void note_local(std::uint32_t function, std::int64_t ticks);
  /// Marks the trace incomplete (an opaque call) or unsupported.
  void note_opaque(std::uint32_t function);

  // ---- polls ----
  /// (With MPI_THREAD_MULTIPLE every poll is timed: the sampling state is not shared.)
  bool poll_sample() { return multiple() || !poll_.open || (++poll_counter_ & 63) == 0; }
  /// A failed poll: extends the open run with the same key or starts a new one.
  void failed_poll(const Call& c, std::uint64_t key, const MPI_Request* requests, int n,
                   std::int32_t peer, std::int32_t tag, std::uint64_t comm) {
    // The hot case, inline: one more untimed call of the open run.
    if (poll_.open && c.start() < 0 && poll_.key == key && poll_.function == c.function() &&
        poll_.thread == thread_number()) {
      ++poll_.calls;
      return;
    }
    failed_poll_slow(c, key, requests, n, peer, tag, comm);
  }
  /// The start of a successful poll whose start was not timed, from its end.
  std::int64_t estimated_start(std::int64_t end) const;
  /// Writes the open poll run; `next_tick` (the start of what closes it, or -1) bounds its end.
  void close_poll_run(std::int64_t next_tick = -1);

  // ---- communicators ----
  CommInfo& comm(MPI_Comm c);
  /// A communicator already known (no MPI call: the handle may be freed already).
  const CommInfo* find_comm(MPI_Comm c);
  /// Registers a new communicator and records its creation. Its id mixes `seed` (what every
  /// member of the creating call knows alike) with the lowest world rank of the new group
  /// (docs/trace-format.md, "Communicators"). Returns 0 for MPI_COMM_NULL.
  std::uint64_t created(MPI_Comm newcomm, std::uint64_t seed, std::int64_t tick);
  /// A creation counter per seed, for calls that are collective over a subset of the parent.
  std::uint64_t keyed_counter(std::uint64_t seed);
  void forget(MPI_Comm c);
  static std::int32_t world_rank(const CommInfo& c, int rank, bool remote_group = false);

  // ---- requests ----
  std::uint64_t add_request(MPI_Request r, RequestKind kind, bool persistent, const CommInfo* comm,
                            int source_rank);
  RequestInfo* find_request(MPI_Request r);
  /// A new id for a persistent request being started.
  std::uint64_t restart(MPI_Request r);
  /// Forgets the oldest live request of this handle.
  void forget_request(MPI_Request r);
  /// Matched-probe messages: an id at Mprobe, taken back at Mrecv/Imrecv.
  std::uint64_t add_message(MPI_Message m, const CommInfo* comm);
  std::pair<std::uint64_t, const CommInfo*> take_message(MPI_Message m);
  /// The completion record of `before` with `status`; forgets non-persistent requests.
  Completion complete(MPI_Request before, const MPI_Status* status, int index);
  /// Completion of a blocking receive's status (no request).
  Completion status_completion(const CommInfo& comm, const MPI_Status* status, bool remote);

  // ---- scratch ----
  MPI_Status* statuses(int n);
  MPI_Request* requests(int n, int slot);
  int* ints(int n);
  MPI_Datatype* datatypes(int n, int slot);
  std::vector<MPI_Fint>& fortran_statuses() { return fortran_statuses_; }

  /// Lock for MPI_THREAD_MULTIPLE programs (empty otherwise).
  std::unique_lock<std::mutex> lock() {
    return multiple() ? std::unique_lock<std::mutex>(mutex_) : std::unique_lock<std::mutex>();
  }

  const Settings& settings() const { return settings_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool multiple() const { return thread_level_ == MPI_THREAD_MULTIPLE; }

 private:
  friend class Lifecycle;
  void write(Event& e);
  void failed_poll_slow(const Call& c, std::uint64_t key, const MPI_Request* requests, int n,
                        std::int32_t peer, std::int32_t tag, std::uint64_t comm);
  void record_creation(const CommInfo& info, std::int64_t tick);
  void fail(const std::string& what);
  /// Measures this rank's clock offset to rank 0 (collective); returns the sync record JSON.
  std::string clock_sync(const char* phase);
  std::string header_json(int thread_level, Lang lang) const;
  std::string rank_summary_json() const;
  void write_index(const std::vector<std::string>& summaries);
  void calibrate_overhead();

  Settings settings_;
  int rank_ = 0;
  int size_ = 1;
  int thread_level_ = MPI_THREAD_SINGLE;
  MPI_Comm private_comm_ = MPI_COMM_NULL;  ///< the tracer's own messages (clock sync, index)
  std::unique_ptr<trace::MappedRankFile> file_;
  std::unique_ptr<trace::BlockEncoder> encoder_;
  bool failed_ = false;
  volatile bool writing_ = false;  ///< inside write(): a signal handler must not flush
  bool incomplete_ = false;
  double ticks_per_second_ = 1e9;
  std::int64_t overhead_ticks_ = 0;
  std::int64_t local_overhead_ticks_ = 0;
  std::string file_path_;
  std::string mpi_library_;
  nlohmann::json collectives_;     ///< rank 0: collective tuning in force
  nlohmann::json point_to_point_;  ///< rank 0: pml/btl and eager limits
  std::string init_sync_;
  std::string finalize_sync_;
  std::int64_t init_tick_ = 0;
  std::int64_t init_ns_ = 0;

  Event event_;
  CallSites sites_;
  Event module_event_;            ///< a `module` record, written before the event that needs it
  std::uint32_t new_module_ = 0;  ///< the module event_'s site is the first in
  std::uint64_t sequence_ = 0;
  std::uint32_t pending_local_calls_ = 0;
  std::int64_t pending_local_ticks_ = 0;
  std::vector<std::uint64_t> local_calls_;  ///< per function id
  std::vector<std::int64_t> local_ticks_;
  std::vector<std::uint64_t> opaque_calls_;

  struct PollRun {
    bool open = false;
    std::uint32_t function = 0;
    std::uint64_t key = 0;
    std::int64_t first_start = 0;
    std::int64_t last_sample_end = 0;   ///< end of the last timed call
    std::uint64_t calls_at_sample = 0;  ///< calls up to and including it
    std::uint64_t calls = 0;
    std::int64_t sampled_ticks = 0;  ///< time inside the timed calls
    std::uint64_t samples = 0;
    std::vector<std::uint64_t> requests;
    std::int32_t peer = 0, tag = 0;
    std::uint64_t comm = 0;
    std::uint32_t thread = 0;
    Lang lang = Lang::c;
  };
  PollRun poll_;
  Event poll_event_;
  Event comm_event_;
  std::map<std::uint64_t, std::uint64_t> creation_counters_;
  std::uint64_t poll_counter_ = 0;

  CommInfo world_;
  CommInfo self_;
  HandleMap<std::unique_ptr<CommInfo>> comms_;
  /// The live requests of one handle, oldest first (usually just `first`).
  struct RequestEntry {
    RequestInfo first;
    std::vector<RequestInfo> more;
  };
  HandleMap<RequestEntry> requests_;
  struct MessageInfo {
    std::uint64_t id = 0;
    const CommInfo* comm = nullptr;
  };
  HandleMap<MessageInfo> messages_;
  std::uint64_t next_request_ = 0;
  std::uint64_t unknown_comms_ = 0;

  std::vector<MPI_Status> statuses_;
  std::vector<MPI_Request> request_slots_[2];
  std::vector<int> ints_;
  std::vector<MPI_Datatype> datatype_slots_[2];
  std::vector<MPI_Fint> fortran_statuses_;
  std::mutex mutex_;
};

Recorder& make_recorder();
extern Recorder* g_recorder;
inline Recorder& recorder() {
  return g_recorder != nullptr ? *g_recorder : make_recorder();
}

/// World ranks of a group's members, in group order.
std::vector<std::int32_t> group_world_ranks(MPI_Group group);

}  // namespace commgauge::tracer
