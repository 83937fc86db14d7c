#include "tracer/recorder.hpp"

#include <dlfcn.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <ctime>
#include <map>

#include "common/json_text.hpp"
#include "tracer/hooks.hpp"

namespace commgauge::tracer {

bool g_active = false;
bool g_use_tsc = false;
thread_local int t_depth __attribute__((tls_model("initial-exec"))) = 0;

namespace {

std::atomic<std::uint32_t> g_threads{0};

/// splitmix64's finaliser: ids from a few numbers, the same on every rank.
std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a * 0x9E3779B97F4A7C15ULL + b + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t hash_members(const std::vector<std::int32_t>& members) {
  std::uint64_t h = members.size();
  for (std::int32_t m : members)
    h = mix(h, static_cast<std::uint64_t>(m));
  return h;
}

// Fortran sentinels (Open MPI's names), looked up once; null in other MPI libraries.
struct FortranSentinels {
  void* in_place = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_");
  void* bottom = dlsym(RTLD_DEFAULT, "mpi_fortran_bottom_");
  void* status_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_status_ignore_");
  void* statuses_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_statuses_ignore_");
};
const FortranSentinels& sentinels() {
  static const FortranSentinels s;
  return s;
}

// A Fortran status is the C status seen as integers (MPI_STATUS_SIZE in mpif.h: 6 in Open MPI
// 4.1, 5 in MPICH), which C's mpi.h does not define.
constexpr int kStatusSize = static_cast<int>(sizeof(MPI_Status) / sizeof(MPI_Fint));

}  // namespace

thread_local std::uint32_t t_thread __attribute__((tls_model("initial-exec"))) = UINT32_MAX;

std::uint32_t new_thread_number() {
  t_thread = g_threads.fetch_add(1);
  return t_thread;
}

Recorder* g_recorder = nullptr;

Recorder& make_recorder() {
  // Never destroyed: wrappers may run during the program's static destruction.
  static Recorder* r = new Recorder;
  g_recorder = r;
  return *r;
}

void note_local(std::uint32_t function, std::int64_t ticks) {
  recorder().note_local(function, ticks);
}

bool poll_sample() {
  return recorder().poll_sample();
}

Recorder::Recorder() {
  world_.id = 0;
  self_.id = 1;
}

Recorder::~Recorder() = default;

// ---- events ----

Event& Recorder::event(const Call& c) {
  Event& e = event_;
  e.kind = trace::RecordKind::function;
  e.function = c.function();
  // A successful untimed poll: timed now, its start estimated from the run's timed calls.
  e.end_tick = c.end() >= 0 ? c.end() : now_ticks();
  e.start_tick = c.start() >= 0 ? c.start() : estimated_start(e.end_tick);
  e.fields = 0;
  e.flags = 0;
  if (c.lang() == Lang::fortran) e.flags |= trace::kFortran;
  if (c.rc() != MPI_SUCCESS) e.flags |= trace::kError;
  if (c.site() != nullptr) {
    const CallSites::Site site = sites_.locate(c.site());
    e.fields |= trace::kSite;
    e.site_module = site.module;
    e.site_offset = site.offset;
    if (site.new_module) new_module_ = site.module;
  }
  e.completions.clear();
  e.counts.clear();
  e.recv_counts.clear();
  e.requests.clear();
  return e;
}

Event& Recorder::record(trace::RecordKind kind, std::int64_t tick) {
  Event& e = event_;
  e.kind = kind;
  e.function = 0;
  e.start_tick = e.end_tick = tick;
  e.fields = 0;
  e.flags = 0;
  e.completions.clear();
  e.counts.clear();
  e.recv_counts.clear();
  e.requests.clear();
  e.members.clear();
  e.text.clear();
  return e;
}

void Recorder::emit() {
  if (event_.flags != 0) event_.fields |= trace::kFlags;
  if (new_module_ != 0) {  // the object this call's site lies in, described before the call
    Event& m = module_event_;
    m.kind = trace::RecordKind::module;
    m.start_tick = m.end_tick = event_.start_tick;
    m.fields = trace::kText;
    m.text = json_text(sites_.module_json(new_module_));
    new_module_ = 0;
    write(m);
  }
  write(event_);
}

void Recorder::write(Event& e) {
  if (failed_ || !encoder_) return;
  if (poll_.open && &e != &poll_event_) close_poll_run(e.start_tick);
  Event& w = e;
  if (pending_local_calls_ > 0 &&
      (e.kind == trace::RecordKind::function || e.kind == trace::RecordKind::poll_run)) {
    w.fields |= trace::kLocal;
    w.local_calls = pending_local_calls_;
    w.local_ticks = pending_local_ticks_;
    pending_local_calls_ = 0;
    pending_local_ticks_ = 0;
  }
  const std::uint32_t thread = thread_number();
  if (thread != 0 || multiple()) {
    w.fields |= trace::kThread;
    w.thread = thread;
    w.sequence = sequence_;
  }
  ++sequence_;
  if (settings_.cpu_time) {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    w.fields |= trace::kCpu;
    w.cpu_ns = static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  }
  writing_ = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  try {
    encoder_->append(e);
  } catch (const std::exception& error) {
    fail(error.what());
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  writing_ = false;
}

void Recorder::flush_on_signal() {
  if (writing_ || failed_ || !encoder_) return;
  try {
    encoder_->flush_without_allocating();
  } catch (...) {  // nothing can be reported from a signal handler
  }
}

void Recorder::fail(const std::string& what) {
  if (failed_) return;
  failed_ = true;
  std::fprintf(stderr,
               "commgauge tracer: rank %d: %s; this rank's trace stops here, the program goes on\n",
               rank_, what.c_str());
}

void Recorder::note_local(std::uint32_t function, std::int64_t ticks) {
  auto guard = lock();
  ++pending_local_calls_;
  pending_local_ticks_ += ticks;
  if (function < local_calls_.size()) {
    ++local_calls_[function];
    local_ticks_[function] += ticks;
  }
}

void Recorder::note_opaque(std::uint32_t function) {
  incomplete_ = true;
  if (function < opaque_calls_.size()) ++opaque_calls_[function];
}

// ---- polls ----

std::int64_t Recorder::estimated_start(std::int64_t end) const {
  const std::int64_t mean =
      poll_.samples > 0 ? poll_.sampled_ticks / static_cast<std::int64_t>(poll_.samples) : 0;
  return end - mean;
}

void Recorder::failed_poll_slow(const Call& c, std::uint64_t key, const MPI_Request* requests,
                                int n, std::int32_t peer, std::int32_t tag, std::uint64_t comm) {
  const std::uint32_t thread = thread_number();
  if (poll_.open && (poll_.key != key || poll_.function != c.function() || poll_.thread != thread))
    close_poll_run();
  if (!poll_.open) {
    poll_.open = true;
    poll_.function = c.function();
    poll_.key = key;
    poll_.thread = thread;
    poll_.lang = c.lang();
    // The first call of a run is timed (poll_sample), unless a run of another key was open.
    poll_.first_start = c.start() >= 0 ? c.start() : now_ticks();
    poll_.last_sample_end = c.end() >= 0 ? c.end() : poll_.first_start;
    poll_.calls_at_sample = 0;
    poll_.calls = 0;
    poll_.sampled_ticks = 0;
    poll_.samples = 0;
    poll_.requests.clear();
    for (int i = 0; i < n; ++i) {
      RequestInfo* info = requests[i] == MPI_REQUEST_NULL ? nullptr : find_request(requests[i]);
      poll_.requests.push_back(info != nullptr && info->active ? info->id : 0);
    }
    poll_.peer = peer;
    poll_.tag = tag;
    poll_.comm = comm;
  }
  ++poll_.calls;
  if (c.start() >= 0) {
    poll_.sampled_ticks += c.end() - c.start();
    ++poll_.samples;
    poll_.last_sample_end = c.end();
    poll_.calls_at_sample = poll_.calls;
  }
}

void Recorder::close_poll_run(std::int64_t next_tick) {
  if (!poll_.open) return;
  poll_.open = false;
  Event& e = poll_event_;
  e = Event{};
  e.kind = trace::RecordKind::poll_run;
  e.function = poll_.function;
  e.start_tick = poll_.first_start;
  // The end: the last timed call's, plus the untimed calls after it at the run's mean period
  // (timed calls come 1 in 64), never past what closed the run.
  std::int64_t end = poll_.last_sample_end;
  const std::uint64_t untimed = poll_.calls - poll_.calls_at_sample;
  if (untimed > 0 && poll_.calls_at_sample > 1) {
    const double period = static_cast<double>(poll_.last_sample_end - poll_.first_start) /
                          static_cast<double>(poll_.calls_at_sample);
    end += static_cast<std::int64_t>(period * static_cast<double>(untimed));
  }
  if (next_tick >= 0 && end > next_tick) end = next_tick;
  e.end_tick = std::max(end, e.start_tick);
  e.fields = trace::kPoll;
  e.calls = poll_.calls;
  // The sampled calls' mean time inside MPI, times the number of calls, at most the run.
  const double in_mpi = poll_.samples > 0 ? static_cast<double>(poll_.sampled_ticks) /
                                                static_cast<double>(poll_.samples) *
                                                static_cast<double>(poll_.calls)
                                          : 0.0;
  e.in_mpi_ticks = std::min(static_cast<std::int64_t>(in_mpi), e.end_tick - e.start_tick);
  if (!poll_.requests.empty()) {
    e.fields |= trace::kRequests;
    e.requests = poll_.requests;
  } else {
    e.fields |= trace::kPeer | trace::kTag | trace::kComm;
    e.peer = poll_.peer;
    e.tag = poll_.tag;
    e.comm = poll_.comm;
  }
  if (poll_.lang == Lang::fortran) {
    e.flags = trace::kFortran;
    e.fields |= trace::kFlags;
  }
  write(e);
}

// ---- communicators ----

std::int32_t Recorder::world_rank(const CommInfo& c, int rank, bool remote_group) {
  if (rank == MPI_ANY_SOURCE) return trace::kAnySource;
  if (rank == MPI_PROC_NULL) return trace::kProcNull;
  if (rank == MPI_ROOT) return trace::kRootSelf;
  const auto& group = remote_group ? c.remote : c.local;
  if (c.id == 0 && !remote_group) return rank;
  if (rank < 0 || static_cast<std::size_t>(rank) >= group.size()) return trace::kProcNull;
  return group[static_cast<std::size_t>(rank)];
}

std::vector<std::int32_t> group_world_ranks(MPI_Group group) {
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    in[static_cast<std::size_t>(i)] = i;
  MPI_Group world;
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  PMPI_Group_translate_ranks(group, n, in.data(), world, out.data());
  PMPI_Group_free(&world);
  return {out.begin(), out.end()};
}

namespace {

void fill_members(MPI_Comm c, CommInfo& info) {
  int inter = 0;
  PMPI_Comm_test_inter(c, &inter);
  info.inter = inter != 0;
  MPI_Group group;
  PMPI_Comm_group(c, &group);
  info.local = group_world_ranks(group);
  PMPI_Group_free(&group);
  if (info.inter) {
    PMPI_Comm_remote_group(c, &group);
    info.remote = group_world_ranks(group);
    PMPI_Group_free(&group);
  }
}

}  // namespace

const CommInfo* Recorder::find_comm(MPI_Comm c) {
  if (c == MPI_COMM_WORLD) return &world_;
  if (c == MPI_COMM_SELF) return &self_;
  auto* p = comms_.find(HandleMap<int>::key(c));
  return p != nullptr ? p->get() : nullptr;
}

CommInfo& Recorder::comm(MPI_Comm c) {
  if (c == MPI_COMM_WORLD) return world_;
  if (c == MPI_COMM_SELF) return self_;
  if (auto* p = comms_.find(HandleMap<int>::key(c)); p != nullptr && *p) return **p;
  if (c == MPI_COMM_NULL) return world_;  // an erroneous call: MPI reports it, not us
  // A communicator the tracer did not see created (an opaque call made it): registered now,
  // with an id its other members compute alike from its member list.
  auto info = std::make_unique<CommInfo>();
  fill_members(c, *info);
  std::vector<std::int32_t> all = info->local;
  all.insert(all.end(), info->remote.begin(), info->remote.end());
  std::sort(all.begin(), all.end());
  const std::uint64_t seed = mix(0x756e6b6e6f776eULL, hash_members(all));
  info->id = mix(seed, keyed_counter(seed));
  CommInfo& result = *info;
  record_creation(result, now_ticks());
  comms_.insert(HandleMap<int>::key(c)) = std::move(info);
  return result;
}

std::uint64_t Recorder::keyed_counter(std::uint64_t seed) {
  return creation_counters_[seed]++;
}

std::uint64_t Recorder::created(MPI_Comm newcomm, std::uint64_t seed, std::int64_t tick) {
  if (newcomm == MPI_COMM_NULL) return 0;
  auto info = std::make_unique<CommInfo>();
  fill_members(newcomm, *info);
  std::int32_t lowest = INT32_MAX;
  for (std::int32_t m : info->local)
    lowest = std::min(lowest, m);
  for (std::int32_t m : info->remote)
    lowest = std::min(lowest, m);
  info->id = mix(seed, static_cast<std::uint64_t>(lowest));
  if (info->id <= 1) info->id += 2;  // 0 and 1 are MPI_COMM_WORLD and MPI_COMM_SELF
  const std::uint64_t id = info->id;
  record_creation(*info, tick);
  comms_.insert(HandleMap<int>::key(newcomm)) = std::move(info);
  return id;
}

void Recorder::record_creation(const CommInfo& info, std::int64_t tick) {
  Event& e = comm_event_;
  e = Event{};
  e.kind = trace::RecordKind::comm_create;
  e.start_tick = e.end_tick = tick;
  e.fields = trace::kComm | trace::kMembers;
  e.comm = info.id;
  e.members = info.local;
  e.members.insert(e.members.end(), info.remote.begin(), info.remote.end());
  e.remote_size = static_cast<std::uint32_t>(info.remote.size());
  if (info.inter) {
    e.fields |= trace::kFlags;
    e.flags = trace::kIntercomm;
  }
  write(e);
}

void Recorder::forget(MPI_Comm c) {
  if (c == MPI_COMM_WORLD || c == MPI_COMM_SELF || c == MPI_COMM_NULL) return;
  comms_.erase(HandleMap<int>::key(c));
}

// ---- requests ----

std::uint64_t Recorder::add_request(MPI_Request r, RequestKind kind, bool persistent,
                                    const CommInfo* comm, int source_rank) {
  if (r == MPI_REQUEST_NULL) return 0;
  RequestEntry& entry = requests_.insert(HandleMap<int>::key(r));
  // Open MPI hands out one shared, already completed request for sends that finished at
  // once, so a handle can stand for several live requests: they queue up in creation order.
  if (entry.first.id != 0) entry.more.push_back(RequestInfo{});
  RequestInfo& info = entry.more.empty() ? entry.first : entry.more.back();
  info.id = ++next_request_;
  info.init_id = info.id;
  info.kind = kind;
  info.persistent = persistent;
  info.active = !persistent;
  info.comm = comm;
  info.source_rank = source_rank;
  info.comm_handle = MPI_COMM_NULL;
  info.cancel_requested = false;
  return info.id;
}

RequestInfo* Recorder::find_request(MPI_Request r) {
  RequestEntry* entry = requests_.find(HandleMap<int>::key(r));
  return entry != nullptr ? &entry->first : nullptr;
}

std::uint64_t Recorder::restart(MPI_Request r) {
  RequestInfo* info = find_request(r);
  if (info == nullptr) return 0;
  info->id = ++next_request_;
  info->active = true;
  info->cancel_requested = false;
  return info->id;
}

std::uint64_t Recorder::add_message(MPI_Message m, const CommInfo* comm) {
  if (m == MPI_MESSAGE_NULL || m == MPI_MESSAGE_NO_PROC) return 0;
  MessageInfo& info = messages_.insert(HandleMap<int>::key(m));
  info.id = ++next_request_;
  info.comm = comm;
  return info.id;
}

std::pair<std::uint64_t, const CommInfo*> Recorder::take_message(MPI_Message m) {
  MessageInfo* info = messages_.find(HandleMap<int>::key(m));
  if (info == nullptr) return {0, nullptr};
  const auto result = std::make_pair(info->id, info->comm);
  messages_.erase(HandleMap<int>::key(m));
  return result;
}

void Recorder::forget_request(MPI_Request r) {
  RequestEntry* entry = requests_.find(HandleMap<int>::key(r));
  if (entry == nullptr) return;
  if (entry->more.empty()) {
    requests_.erase(HandleMap<int>::key(r));
  } else {
    entry->first = entry->more.front();
    entry->more.erase(entry->more.begin());
  }
}

namespace {

std::uint64_t received_bytes(const MPI_Status* status) {
  int n = 0;
  if (PMPI_Get_count(status, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0) return 0;
  return static_cast<std::uint64_t>(n);
}

bool cancelled(const MPI_Status* status) {
  int flag = 0;
  PMPI_Test_cancelled(status, &flag);
  return flag != 0;
}

}  // namespace

Completion Recorder::status_completion(const CommInfo& comm, const MPI_Status* status,
                                       bool remote) {
  Completion c;
  c.source = world_rank(comm, status->MPI_SOURCE, remote);
  c.tag = status->MPI_TAG;
  c.bytes = received_bytes(status);  // (a blocking receive or probe is never cancelled)
  return c;
}

Completion Recorder::complete(MPI_Request before, const MPI_Status* status, int index) {
  Completion c;
  c.index = index;
  if (before == MPI_REQUEST_NULL) return c;
  RequestInfo* info = find_request(before);
  if (info == nullptr) {  // made by a call the tracer did not see
    return c;
  }
  if (!info->active) return c;  // an inactive persistent request completes nothing
  c.request = info->id;
  // Only a request someone tried to cancel can have been cancelled (saves a call per request).
  if (info->kind == RequestKind::recv && status != nullptr && info->comm != nullptr) {
    c.source = world_rank(*info->comm, status->MPI_SOURCE, info->comm->inter);
    c.tag = status->MPI_TAG;
    c.bytes = received_bytes(status);
    c.cancelled = info->cancel_requested && cancelled(status);
  } else if (status != nullptr && info->cancel_requested) {
    c.cancelled = cancelled(status);
  }
  if (info->persistent)
    info->active = false;
  else
    forget_request(before);
  return c;
}

// ---- scratch ----

MPI_Status* Recorder::statuses(int n) {
  if (n < 1) n = 1;
  if (statuses_.size() < static_cast<std::size_t>(n)) statuses_.resize(static_cast<std::size_t>(n));
  return statuses_.data();
}

MPI_Request* Recorder::requests(int n, int slot) {
  auto& v = request_slots_[slot];
  if (n < 1) n = 1;
  if (v.size() < static_cast<std::size_t>(n)) v.resize(static_cast<std::size_t>(n));
  return v.data();
}

int* Recorder::ints(int n) {
  if (n < 1) n = 1;
  if (ints_.size() < static_cast<std::size_t>(n)) ints_.resize(static_cast<std::size_t>(n));
  return ints_.data();
}

MPI_Datatype* Recorder::datatypes(int n, int slot) {
  auto& v = datatype_slots_[slot];
  if (n < 1) n = 1;
  if (v.size() < static_cast<std::size_t>(n)) v.resize(static_cast<std::size_t>(n));
  return v.data();
}

// ---- scratch and Fortran helpers of hooks.hpp ----

MPI_Status* scratch_statuses(int n) {
  return recorder().statuses(n);
}

const MPI_Request* snapshot_requests(const MPI_Request* requests, int n) {
  MPI_Request* copy = recorder().requests(n, 0);
  if (requests != nullptr && n > 0) std::copy(requests, requests + n, copy);
  return copy;
}

std::optional<std::uint64_t> send_page_offset_bytes(const void* buf, int count, MPI_Datatype type) {
  if (buf == MPI_IN_PLACE || count <= 0 || type == MPI_DATATYPE_NULL) return std::nullopt;
  // The first byte: buf plus the datatype's true lower bound (MPI_BOTTOM with absolute
  // addresses included). What recording it costs a traced send: docs/measurements.md, "Whose
  // pages" (within scripts/bench-tracer's noise).
  MPI_Aint true_lb = 0, true_extent = 0;
  if (PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS || true_extent <= 0)
    return std::nullopt;
  const std::uintptr_t first =
      reinterpret_cast<std::uintptr_t>(buf) + static_cast<std::uintptr_t>(true_lb);
  return static_cast<std::uint64_t>(first & (recorder().settings().page_bytes - 1));
}

FreshLook look_at_receive_buffer(const void* buf, int count, MPI_Datatype type) {
  const Settings& settings = recorder().settings();
  if (settings.fresh_min_bytes == 0 || buf == nullptr || buf == MPI_BOTTOM || buf == MPI_IN_PLACE ||
      count <= 0 || type == MPI_DATATYPE_NULL)
    return {};
  // The span needs the extents on every receive, also below the threshold: both calls took
  // 3.8-4.4 ns together here (MPI_DOUBLE, best of 5 x 20 M), against the 95 ns an Irecv's event
  // costs; a cache per handle would go stale when a freed handle is reused.
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS || extent < 0 ||
      true_extent <= 0)
    return {};
  // The bytes the receive may write: (count - 1) extents and the last element's true extent.
  std::uint64_t span = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(count - 1),
                             static_cast<std::uint64_t>(extent), &span) ||
      __builtin_add_overflow(span, static_cast<std::uint64_t>(true_extent), &span) ||
      span < settings.fresh_min_bytes || span > (std::uint64_t{1} << 47))
    return {};
  const std::uintptr_t page = settings.page_bytes;
  const std::uintptr_t first =
      reinterpret_cast<std::uintptr_t>(buf) + static_cast<std::uintptr_t>(true_lb);
  const std::uintptr_t begin = first & ~(page - 1);
  const std::uintptr_t end = (first + span + page - 1) & ~(page - 1);
  const std::int64_t look_start = now_ticks();
  thread_local std::vector<unsigned char> resident;
  resident.resize((end - begin) / page);
  FreshLook look;
  // A buffer not all mapped (ENOMEM) is the library's to report: no page is counted.
  if (::mincore(reinterpret_cast<void*>(begin), end - begin, resident.data()) == 0) {
    std::uint64_t fresh_pages = 0;
    for (unsigned char r : resident)
      fresh_pages += (r & 1) == 0 ? 1 : 0;
    look.bytes = fresh_pages * page;
  }
  // At least one tick: the event then says that the tracer looked (nothing fresh, or some).
  look.ticks = std::max<std::int64_t>(1, now_ticks() - look_start);
  return look;
}

void* fortran_buffer(void* f_buffer) {
  const FortranSentinels& s = sentinels();
  if (f_buffer != nullptr && f_buffer == s.in_place) return MPI_IN_PLACE;
  if (f_buffer != nullptr && f_buffer == s.bottom) return MPI_BOTTOM;
  return f_buffer;
}

MPI_Fint* fortran_status(MPI_Fint* f_status) {
  if (f_status != nullptr && f_status == sentinels().status_ignore) {
    auto& v = recorder().fortran_statuses();
    if (v.size() < kStatusSize) v.resize(kStatusSize);
    return v.data();
  }
  return f_status;
}

MPI_Fint* fortran_statuses(MPI_Fint* f_statuses, int n) {
  if (f_statuses != nullptr && f_statuses == sentinels().statuses_ignore) {
    auto& v = recorder().fortran_statuses();
    const std::size_t want = static_cast<std::size_t>(std::max(n, 1)) * kStatusSize;
    if (v.size() < want) v.resize(want);
    return v.data();
  }
  return f_statuses;
}

MPI_Status* c_statuses(const MPI_Fint* f_statuses, int n) {
  MPI_Status* out = recorder().statuses(n);
  for (int i = 0; i < n; ++i)
    PMPI_Status_f2c(f_statuses + static_cast<std::ptrdiff_t>(i) * kStatusSize, &out[i]);
  return out;
}

MPI_Request* c_requests(const MPI_Fint* f_requests, int n, int slot) {
  MPI_Request* out = recorder().requests(n, slot);
  for (int i = 0; i < n; ++i)
    out[i] = PMPI_Request_f2c(f_requests[i]);
  return out;
}

int c_index(MPI_Fint f_index) {
  return f_index == MPI_UNDEFINED ? MPI_UNDEFINED : static_cast<int>(f_index) - 1;
}

int* c_indices(const MPI_Fint* f_indices, int n) {
  int* out = recorder().ints(n);
  for (int i = 0; i < n; ++i)
    out[i] = c_index(f_indices[i]);
  return out;
}

const MPI_Datatype* c_datatypes(const MPI_Fint* f_types, MPI_Comm comm, int slot) {
  int n = 0;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter)
    PMPI_Comm_remote_size(comm, &n);
  else
    PMPI_Comm_size(comm, &n);
  MPI_Datatype* out = recorder().datatypes(n, slot);
  for (int i = 0; i < n; ++i)
    out[i] = PMPI_Type_f2c(f_types[i]);
  return out;
}

}  // namespace commgauge::tracer
