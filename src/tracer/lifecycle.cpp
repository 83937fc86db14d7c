// MPI_Init, MPI_Init_thread, MPI_Finalize and MPI_Abort in both bindings, and what the tracer
// does around them: the rank file and header, the clock synchronisation with rank 0, the
// calibration of its own overhead, the end record and the trace index.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commgauge/version.hpp"
#include "common/json_text.hpp"
#include "common/text_file.hpp"
#include "net/mpi/mpi_tool_info.hpp"
#include "trace/function_ids.hpp"
#include "trace/functions.hpp"
#include "tracer/hooks.hpp"
#include "tracer/recorder.hpp"

namespace commgauge::tracer {

namespace {

namespace fn = trace::fn;

std::int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// Chooses the clock before the first reading: the TSC where it is invariant (constant and
/// non-stop, so it ticks at one rate in every power state), else CLOCK_MONOTONIC.
void choose_clock() {
  static bool chosen = false;
  if (chosen) return;
  chosen = true;
  const char* forced = std::getenv("COMMGAUGE_TRACE_CLOCK");
  if (forced != nullptr && std::strcmp(forced, "monotonic") == 0) return;
#if defined(__x86_64__) || defined(__i386__)
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    g_use_tsc = line.find(" constant_tsc") != std::string::npos &&
                line.find(" nonstop_tsc") != std::string::npos;
    break;
  }
#endif
}

struct ClockPoint {
  std::int64_t tick = 0;
  std::int64_t ns = 0;
  std::int64_t pairing_ns = 0;  ///< half the time between the two clock reads around `tick`
};

ClockPoint clock_point() {
  // The tick is read between two CLOCK_MONOTONIC reads; a preemption between the reads (common
  // on a busy machine) would pair the tick with a later time, so the narrowest of a few tries is
  // kept and its half-width is recorded as the pairing's error bound.
  choose_clock();
  ClockPoint best{0, 0, INT64_MAX};
  for (int k = 0; k < 8 && best.pairing_ns > 100; ++k) {
    const std::int64_t before = monotonic_ns();
    const std::int64_t tick = now_ticks();
    const std::int64_t after = monotonic_ns();
    const std::int64_t half = (after - before) / 2;
    if (half < best.pairing_ns) best = {tick, before + half, half};
  }
  return best;
}

ClockPoint g_init_entry;

std::string iso_time_now() {
  char text[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

std::vector<std::string> read_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0'))
    args.push_back(arg);
  return args;
}

/// Counts a null sink: the overhead calibration encodes without writing.
class CountingSink : public trace::BlockSink {
 public:
  void write_block(std::uint32_t, std::span<const unsigned char> block) override {
    bytes += block.size();
  }
  std::uint64_t bytes = 0;
};

constexpr int kSyncTag = 7;

/// mpirun sends SIGTERM to the ranks of a job that is aborted or timed out (then SIGKILL): the
/// block being filled is written first. Installed only where the program left the default.
void on_terminate(int sig) {
  recorder().flush_on_signal();
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_terminate_handlers() {
  for (int sig : {SIGTERM, SIGINT}) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction action {};
    action.sa_handler = on_terminate;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    sigaction(sig, &action, nullptr);
  }
}

}  // namespace

// ---- Recorder: lifecycle ----

void Recorder::calibrate_overhead() {
  // What recording one event costs (two clock readings, building and encoding a send), the
  // median of 7 batches, so that readers can take it out of the computation between events.
  CountingSink sink;
  trace::BlockEncoder scratch(static_cast<std::uint32_t>(rank_), sink);
  Event e;
  std::vector<std::int64_t> per_event;
  constexpr int kBatch = 256;
  for (int batch = 0; batch < 7; ++batch) {
    const std::int64_t t0 = now_ticks();
    for (int i = 0; i < kBatch; ++i) {
      const std::int64_t start = now_ticks();
      e.kind = trace::RecordKind::function;
      e.function = fn::Send;
      e.start_tick = start;
      e.fields =
          trace::kPeer | trace::kTag | trace::kComm | trace::kBytes | trace::kCount | trace::kSite;
      const CallSites::Site site = sites_.locate(__builtin_return_address(0), false);
      e.site_module = site.module;
      e.site_offset = site.offset;
      e.peer = (rank_ + 1) % std::max(size_, 1);
      e.tag = i;
      e.comm = 0;
      int type_size = 0;
      PMPI_Type_size(MPI_DOUBLE, &type_size);
      e.count = static_cast<std::uint64_t>(i);
      e.bytes = e.count * static_cast<std::uint64_t>(type_size);
      e.end_tick = now_ticks();
      scratch.append(e);
    }
    per_event.push_back((now_ticks() - t0) / kBatch);
  }
  std::sort(per_event.begin(), per_event.end());
  overhead_ticks_ = per_event[per_event.size() / 2];
  std::vector<std::int64_t> local;
  for (int batch = 0; batch < 7; ++batch) {
    const std::int64_t t0 = now_ticks();
    for (int i = 0; i < kBatch; ++i) {
      const std::int64_t a = now_ticks();
      const std::int64_t b = now_ticks();
      pending_local_ticks_ += b - a;
    }
    local.push_back((now_ticks() - t0) / kBatch);
  }
  pending_local_ticks_ = 0;
  std::sort(local.begin(), local.end());
  local_overhead_ticks_ = local[local.size() / 2];
}

std::string Recorder::clock_sync(const char* phase) {
  // Offsets to rank 0's CLOCK_MONOTONIC by ping-pong, keeping the round trip of minimum
  // duration (its midpoint is the best estimate of the peer's reading).
  constexpr int kRounds = 10;
  std::int64_t offset_ns = 0;
  std::int64_t best_rtt = 0;
  if (rank_ == 0) {
    for (int r = 1; r < size_; ++r) {
      best_rtt = INT64_MAX;
      std::int64_t best_offset = 0;
      for (int k = 0; k < kRounds; ++k) {
        const std::int64_t t1 = monotonic_ns();
        PMPI_Send(nullptr, 0, MPI_BYTE, r, kSyncTag, private_comm_);
        std::int64_t remote = 0;
        PMPI_Recv(&remote, 1, MPI_INT64_T, r, kSyncTag, private_comm_, MPI_STATUS_IGNORE);
        const std::int64_t t2 = monotonic_ns();
        if (t2 - t1 < best_rtt) {
          best_rtt = t2 - t1;
          best_offset = t1 + (t2 - t1) / 2 - remote;
        }
      }
      const std::int64_t result[2] = {best_offset, best_rtt};
      PMPI_Send(result, 2, MPI_INT64_T, r, kSyncTag, private_comm_);
    }
    best_rtt = 0;
  } else {
    for (int k = 0; k < kRounds; ++k) {
      PMPI_Recv(nullptr, 0, MPI_BYTE, 0, kSyncTag, private_comm_, MPI_STATUS_IGNORE);
      const std::int64_t now = monotonic_ns();
      PMPI_Send(&now, 1, MPI_INT64_T, 0, kSyncTag, private_comm_);
    }
    std::int64_t result[2] = {0, 0};
    PMPI_Recv(result, 2, MPI_INT64_T, 0, kSyncTag, private_comm_, MPI_STATUS_IGNORE);
    offset_ns = result[0];
    best_rtt = result[1];
  }
  const ClockPoint p = clock_point();
  const nlohmann::json sync = {{"phase", phase},
                               {"tick", p.tick},
                               {"local_ns", p.ns},
                               {"offset_ns", offset_ns},
                               {"round_trip_ns", best_rtt},
                               {"pairing_ns", p.pairing_ns}};
  return json_text(sync);
}

std::string Recorder::header_json(int thread_level, Lang lang) const {
  const double ns_per_tick = 1e9 / ticks_per_second_;
  const nlohmann::json header = {
      {"format", "commgauge-trace"},
      {"version", trace::kVersion},
      {"rank", rank_},
      {"size", size_},
      {"host", host_name()},
      {"pid", static_cast<long>(getpid())},
      {"clock",
       {{"source", g_use_tsc ? "tsc" : "monotonic"},
        {"ticks_per_second", ticks_per_second_},
        {"resolution_ns", g_use_tsc ? ns_per_tick : 1.0}}},
      {"thread_level", net::mpi_thread_level_name(thread_level)},
      {"language", lang == Lang::fortran ? "fortran" : "c"},
      {"tracer",
       {{"overhead_ticks_per_event", overhead_ticks_},
        {"overhead_ns_per_event", static_cast<double>(overhead_ticks_) * ns_per_tick},
        {"local_overhead_ns", static_cast<double>(local_overhead_ticks_) * ns_per_tick},
        {"cpu_time", settings_.cpu_time},
        {"fresh_min_bytes", settings_.fresh_min_bytes},
        {"page_bytes", settings_.page_bytes},
        {"commgauge_version", std::string(kVersion) + " (" + kGitRevision + ")"}}},
      {"started", iso_time_now()}};
  return json_text(header);
}

bool Recorder::start(std::uint32_t init_function, std::int64_t init_start, int thread_level,
                     Lang lang) {
  const char* dir = std::getenv("COMMGAUGE_TRACE_DIR");
  settings_.directory = dir != nullptr ? dir : "";
  const char* cpu = std::getenv("COMMGAUGE_TRACE_CPU");
  settings_.cpu_time = cpu != nullptr && std::strcmp(cpu, "1") == 0;
  if (const char* fresh = std::getenv("COMMGAUGE_TRACE_FRESH_MIN_BYTES"); fresh != nullptr) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(fresh, &end, 10);
    if (end != fresh && *end == '\0') settings_.fresh_min_bytes = v;
  }
  if (const long page = ::sysconf(_SC_PAGESIZE); page > 0)
    settings_.page_bytes = static_cast<std::uint64_t>(page);
  // Every rank must agree: the tracer's own messages are collective.
  int want = settings_.directory.empty() ? 0 : 1;
  int all = 0;
  PMPI_Allreduce(&want, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  PMPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (!all) {
    if (want && rank_ == 0)
      std::fprintf(stderr,
                   "commgauge tracer: COMMGAUGE_TRACE_DIR is not set on every rank; "
                   "not tracing\n");
    return false;
  }
  thread_number();  // the thread that initialised MPI is thread 0
  sites_.load();
  thread_level_ = thread_level;
  self_.local = {rank_};
  const std::size_t functions = trace::function_table().size() + 1;
  local_calls_.assign(functions, 0);
  local_ticks_.assign(functions, 0);
  opaque_calls_.assign(functions, 0);
  PMPI_Comm_dup(MPI_COMM_WORLD, &private_comm_);
  mpi_library_ = net::mpi_library_version();

  ::mkdir(settings_.directory.c_str(), 0755);  // usually there already (commgauge trace)
  file_path_ = settings_.directory + "/" + trace::rank_file_name(static_cast<std::uint32_t>(rank_));
  try {
    file_ = std::make_unique<trace::MappedRankFile>(file_path_, true);
    encoder_ = std::make_unique<trace::BlockEncoder>(static_cast<std::uint32_t>(rank_), *file_);
  } catch (const std::exception& error) {
    fail(error.what());
  }
  calibrate_overhead();
  // The tick rate over MPI_Init (tens of milliseconds at least): a 1e-6 estimate that the two
  // clock syncs later refine over the whole run.
  ClockPoint now = clock_point();
  while (now.ns - g_init_entry.ns < 2000000)
    now = clock_point();
  ticks_per_second_ = g_use_tsc ? static_cast<double>(now.tick - g_init_entry.tick) * 1e9 /
                                      static_cast<double>(now.ns - g_init_entry.ns)
                                : 1e9;
  init_sync_ = clock_sync("init");
  if (encoder_) {
    try {
      encoder_->write_header(header_json(thread_level, lang));
    } catch (const std::exception& error) {
      fail(error.what());
    }
  }
  g_active = true;
  install_terminate_handlers();
  Call call(init_function, lang);
  Event& e = event(call);
  e.start_tick = init_start;
  e.end_tick = now_ticks();
  emit();
  Event& sync = record(trace::RecordKind::clock_sync, e.end_tick);
  sync.fields = trace::kText;
  sync.text = init_sync_;
  write(sync);
  return true;
}

std::string Recorder::rank_summary_json() const {
  nlohmann::json opaque = nlohmann::json::object();
  for (std::size_t id = 1; id < opaque_calls_.size(); ++id)
    if (opaque_calls_[id] > 0)
      opaque[std::string(trace::function_name(static_cast<std::uint32_t>(id)))] = opaque_calls_[id];
  nlohmann::json summary = {
      {"rank", rank_},
      {"host", host_name()},
      {"file", trace::rank_file_name(static_cast<std::uint32_t>(rank_))},
      {"events", encoder_ ? encoder_->events() : 0},
      {"bytes", file_ ? file_->bytes_written() : 0},
      {"clock",
       {{"init", nlohmann::json::parse(init_sync_)},
        {"finalize", nlohmann::json::parse(finalize_sync_)}}},
      {"overhead_ns_per_event", static_cast<double>(overhead_ticks_) * 1e9 / ticks_per_second_},
      {"unmodeled", opaque},
      {"failed", failed_}};
  return json_text(summary);
}

void Recorder::finish(std::uint32_t function, std::int64_t start, Lang lang) {
  auto guard = lock();
  close_poll_run();
  finalize_sync_ = clock_sync("finalize");
  {
    Call call(function, lang);
    Event& e = event(call);
    e.start_tick = start;
    e.end_tick = now_ticks();
    emit();
  }
  const std::int64_t tick = now_ticks();
  Event& sync = record(trace::RecordKind::clock_sync, tick);
  sync.fields = trace::kText;
  sync.text = finalize_sync_;
  write(sync);
  // The end record: local calls per function (they are not events) and unmodeled calls.
  nlohmann::json local = nlohmann::json::object();
  for (std::size_t id = 1; id < local_calls_.size(); ++id)
    if (local_calls_[id] > 0)
      local[std::string(trace::function_name(static_cast<std::uint32_t>(id)))] = {
          {"calls", local_calls_[id]}, {"ticks", local_ticks_[id]}};
  Event& end = record(trace::RecordKind::end, tick);
  end.fields = trace::kText;
  end.text = json_text(nlohmann::json{{"local", local}, {"incomplete", incomplete_}});
  write(end);
  try {
    if (encoder_) encoder_->flush();
    if (file_) file_->close();
  } catch (const std::exception& error) {
    fail(error.what());
  }
  g_active = false;

  // The index, written by rank 0 from every rank's summary.
  const std::string mine = rank_summary_json();
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(rank_ == 0 ? size_ : 0));
  PMPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, private_comm_);
  std::vector<int> displacements(lengths.size());
  std::string all;
  if (rank_ == 0) {
    int total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      displacements[r] = total;
      total += lengths[r];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  PMPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), displacements.data(),
               MPI_CHAR, 0, private_comm_);
  if (rank_ == 0) {
    // MPI_T costs Open MPI about 0.2 s to open: once, here, outside the measured window.
    const nlohmann::json settings = net::point_to_point_and_collectives();
    collectives_ = settings["collectives"];
    point_to_point_ = settings["point_to_point"];
    std::vector<std::string> summaries;
    for (std::size_t r = 0; r < lengths.size(); ++r)
      summaries.push_back(all.substr(static_cast<std::size_t>(displacements[r]),
                                     static_cast<std::size_t>(lengths[r])));
    // Without its own rank file (an earlier trace was there) rank 0 leaves the index alone too.
    if (file_)
      write_index(summaries);
    else
      std::fprintf(stderr, "commgauge tracer: no index.json written: rank 0 did not trace\n");
  }
  PMPI_Comm_free(&private_comm_);
}

void Recorder::write_index(const std::vector<std::string>& summaries) {
  nlohmann::json ranks = nlohmann::json::array();
  std::vector<std::string> hosts;
  std::vector<std::size_t> placement;
  nlohmann::json unmodeled = nlohmann::json::object();
  bool any_failed = false;
  std::vector<double> overheads;
  for (const std::string& text : summaries) {
    nlohmann::json s = nlohmann::json::parse(text, nullptr, false);
    if (s.is_discarded()) s = nlohmann::json::object();
    const std::string host = s.value("host", "");
    auto it = std::find(hosts.begin(), hosts.end(), host);
    if (it == hosts.end()) it = hosts.insert(hosts.end(), host);
    placement.push_back(static_cast<std::size_t>(it - hosts.begin()));
    if (s.contains("unmodeled"))
      for (const auto& [name, calls] : s["unmodeled"].items())
        unmodeled[name] = unmodeled.value(name, std::uint64_t{0}) + calls.get<std::uint64_t>();
    any_failed = any_failed || s.value("failed", false);
    overheads.push_back(s.value("overhead_ns_per_event", 0.0));
    ranks.push_back(std::move(s));
  }
  std::sort(overheads.begin(), overheads.end());
  const char* command = std::getenv("COMMGAUGE_TRACE_COMMAND");
  nlohmann::json index = {
      {"format", "commgauge-trace"},
      {"version", trace::kVersion},
      {"ranks", size_},
      {"finished", !any_failed},
      {"complete", !any_failed && unmodeled.empty()},
      {"unmodeled", unmodeled},
      {"hosts", hosts},
      {"placement", placement},
      {"mpi",
       {{"library", mpi_library_},
        {"standard", std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION)},
        {"thread_level", net::mpi_thread_level_name(thread_level_)},
        {"collectives", collectives_},
        {"point_to_point", point_to_point_}}},
      {"clock",
       {{"source", g_use_tsc ? "tsc" : "monotonic"},
        {"resolution_ns", g_use_tsc ? 1e9 / ticks_per_second_ : 1.0}}},
      {"tracer",
       {{"overhead_ns_per_event_median", overheads.empty() ? 0.0 : overheads[overheads.size() / 2]},
        {"commgauge_version", std::string(kVersion) + " (" + kGitRevision + ")"}}},
      {"program", read_command_line()},
      {"command", command != nullptr ? command : ""},
      {"created", iso_time_now()},
      {"rank_info", ranks}};
  const std::string path = settings_.directory + "/index.json";
  try {
    write_text_file(path, json_text(index, 1) + "\n");
  } catch (const std::exception& error) {
    std::fprintf(stderr, "commgauge tracer: %s\n", error.what());
  }
}

void Recorder::abort(std::uint32_t function, std::int64_t start, int errorcode, Lang lang) {
  auto guard = lock();
  close_poll_run();
  {
    Call call(function, lang);
    Event& e = event(call);
    e.start_tick = start;
    e.end_tick = now_ticks();
    e.fields |= trace::kCount;
    e.count = static_cast<std::uint64_t>(static_cast<std::uint32_t>(errorcode));
    emit();
  }
  Event& marker = record(trace::RecordKind::marker, now_ticks());
  marker.fields = trace::kText;
  marker.text = "MPI_Abort(" + std::to_string(errorcode) + ") called on this rank";
  write(marker);
  // Written through and closed: the other ranks are killed without this chance; their
  // files end in the zeros of the last mapped window.
  try {
    if (encoder_) encoder_->flush();
    if (file_) file_->close();
  } catch (const std::exception& error) {
    fail(error.what());
  }
  g_active = false;
}

// ---- the wrappers ----

namespace {

int init_common(int rc, ClockPoint entry, std::uint32_t function, int level, Lang lang) {
  if (rc == MPI_SUCCESS) {
    ++t_depth;
    recorder().start(function, entry.tick, level, lang);
    --t_depth;
  }
  return rc;
}

void finalize_common(Lang lang) {
  if (!g_active) return;
  const std::int64_t start = now_ticks();
  ++t_depth;
  recorder().finish(fn::Finalize, start, lang);
  --t_depth;
}

void abort_common(int errorcode, Lang lang) {
  if (!g_active || t_depth != 0) return;
  const std::int64_t start = now_ticks();
  ++t_depth;
  recorder().abort(fn::Abort, start, errorcode, lang);
  --t_depth;
}

}  // namespace
}  // namespace commgauge::tracer

using commgauge::tracer::Lang;
namespace ct = commgauge::tracer;

COMMGAUGE_C_EXPORT int MPI_Init(int* argc, char*** argv) {
  ct::g_init_entry = ct::clock_point();
  return ct::init_common(PMPI_Init(argc, argv), ct::g_init_entry, commgauge::trace::fn::Init,
                         MPI_THREAD_SINGLE, Lang::c);
}

COMMGAUGE_C_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  ct::g_init_entry = ct::clock_point();
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  return ct::init_common(rc, ct::g_init_entry, commgauge::trace::fn::Init_thread, *provided,
                         Lang::c);
}

COMMGAUGE_C_EXPORT int MPI_Finalize(void) {
  ct::finalize_common(Lang::c);
  return PMPI_Finalize();
}

COMMGAUGE_C_EXPORT int MPI_Abort(MPI_Comm comm, int errorcode) {
  ct::abort_common(errorcode, Lang::c);
  return PMPI_Abort(comm, errorcode);
}

#if COMMGAUGE_TRACER_FORTRAN
// gfortran bindings: Open MPI's mpi_init_ and friends call PMPI_Init..., never the C wrappers.
// (MPICH's call MPI_Init..., so its tracer has no Fortran wrappers: src/tracer/CMakeLists.txt.)
COMMGAUGE_FORTRAN_EXPORT void mpi_init_(MPI_Fint* ierr) {
  using Real = void (*)(MPI_Fint*);
  static const Real real = ct::fortran_symbol<Real>("pmpi_init_");
  ct::g_init_entry = ct::clock_point();
  real(ierr);
  ct::init_common(static_cast<int>(*ierr), ct::g_init_entry, commgauge::trace::fn::Init,
                  MPI_THREAD_SINGLE, Lang::fortran);
}

COMMGAUGE_FORTRAN_EXPORT void mpi_init_thread_(MPI_Fint* required, MPI_Fint* provided,
                                               MPI_Fint* ierr) {
  using Real = void (*)(MPI_Fint*, MPI_Fint*, MPI_Fint*);
  static const Real real = ct::fortran_symbol<Real>("pmpi_init_thread_");
  ct::g_init_entry = ct::clock_point();
  real(required, provided, ierr);
  ct::init_common(static_cast<int>(*ierr), ct::g_init_entry, commgauge::trace::fn::Init_thread,
                  static_cast<int>(*provided), Lang::fortran);
}

COMMGAUGE_FORTRAN_EXPORT void mpi_finalize_(MPI_Fint* ierr) {
  using Real = void (*)(MPI_Fint*);
  static const Real real = ct::fortran_symbol<Real>("pmpi_finalize_");
  ct::finalize_common(Lang::fortran);
  real(ierr);
}

COMMGAUGE_FORTRAN_EXPORT void mpi_abort_(MPI_Fint* comm, MPI_Fint* errorcode, MPI_Fint* ierr) {
  using Real = void (*)(MPI_Fint*, MPI_Fint*, MPI_Fint*);
  static const Real real = ct::fortran_symbol<Real>("pmpi_abort_");
  ct::abort_common(static_cast<int>(*errorcode), Lang::fortran);
  real(comm, errorcode, ierr);
}
#endif
