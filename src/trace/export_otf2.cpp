#include "trace/export_otf2.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "commgauge/version.hpp"
#include "common/text_file.hpp"
#include "trace/call_semantics.hpp"
#include "trace/function_ids.hpp"
#include "trace/functions.hpp"
#include "trace/otf2_sizes.hpp"

#if COMMGAUGE_HAVE_OTF2
#include <otf2/otf2.h>
#endif

namespace commgauge::trace {

#if !COMMGAUGE_HAVE_OTF2

bool otf2_available() {
  return false;
}

Otf2ExportResult export_otf2(const TraceReader&, const std::filesystem::path&) {
  throw InputError(
      "this commgauge was built without OTF2 (Debian: libotf2-trace-dev; scripts/setup installs "
      "it)");
}

#else

bool otf2_available() {
  return true;
}

namespace {

namespace fs = std::filesystem;

// libotf2 prints every error it meets unless a callback takes them (on a full disk about 35
// lines before its last call fails with INTEGRITY_FAULT, which does not say why): an export keeps
// the first, which does ("No space left on device: ..."), for its own one-line error.
struct Otf2Errors {
  std::string archive;  ///< the export's target, for the message
  std::string first;    ///< libotf2's first error in this export
};
thread_local Otf2Errors otf2_errors;

OTF2_ErrorCode keep_first_error(void*, const char*, std::uint64_t, const char*, OTF2_ErrorCode code,
                                const char* format, va_list va) {
  if (otf2_errors.first.empty()) {
    const int error = errno;  // a failed POSIX call's reason, which libotf2 may not name
    char text[512] = {};
    if (format != nullptr) std::vsnprintf(text, sizeof text, format, va);
    otf2_errors.first = text[0] != '\0' ? text : OTF2_Error_GetDescription(code);
    // errno only where libotf2 reports a failed POSIX call: otherwise it may be a stale value.
    const bool posix = otf2_errors.first.find("POSIX") != std::string::npos ||
                       otf2_errors.first.find("Posix") != std::string::npos;
    const std::string reason = posix && error != 0 ? std::strerror(error) : "";
    if (!reason.empty() && otf2_errors.first.find(reason) == std::string::npos)
      otf2_errors.first += " (" + reason + ")";
  }
  return code;
}

// For the time of one export: libotf2's errors to keep_first_error; the previous handler after.
class Otf2ErrorCapture {
 public:
  explicit Otf2ErrorCapture(const fs::path& archive)
      : previous_(OTF2_Error_RegisterCallback(keep_first_error, nullptr)) {
    otf2_errors = {archive.string(), {}};
  }
  ~Otf2ErrorCapture() { OTF2_Error_RegisterCallback(previous_, nullptr); }
  Otf2ErrorCapture(const Otf2ErrorCapture&) = delete;
  Otf2ErrorCapture& operator=(const Otf2ErrorCapture&) = delete;

 private:
  OTF2_ErrorCallback previous_;
};

// The trace was read and checked before it is written: a failing libotf2 call is the writing's
// failure (a full disk, a file system error), exit 1, not bad input.
void check(OTF2_ErrorCode code, const char* what) {
  if (code == OTF2_SUCCESS) return;
  std::string message = fmt::format("writing the OTF2 archive failed in {}: {} ({})", what,
                                    OTF2_Error_GetName(code), OTF2_Error_GetDescription(code));
  if (!otf2_errors.first.empty()) message += "; libotf2's first error: " + otf2_errors.first;
  throw OutputError(otf2_errors.archive, message);
}

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) {
  return 0;
}
const OTF2_FlushCallbacks kFlushCallbacks = {pre_flush, post_flush};

OTF2_CollectiveOp to_otf2(collectives::Operation op) {
  switch (op) {
    case collectives::Operation::barrier:
      return OTF2_COLLECTIVE_OP_BARRIER;
    case collectives::Operation::bcast:
      return OTF2_COLLECTIVE_OP_BCAST;
    case collectives::Operation::gather:
      return OTF2_COLLECTIVE_OP_GATHER;
    case collectives::Operation::gatherv:
      return OTF2_COLLECTIVE_OP_GATHERV;
    case collectives::Operation::scatter:
      return OTF2_COLLECTIVE_OP_SCATTER;
    case collectives::Operation::scatterv:
      return OTF2_COLLECTIVE_OP_SCATTERV;
    case collectives::Operation::allgather:
      return OTF2_COLLECTIVE_OP_ALLGATHER;
    case collectives::Operation::allgatherv:
      return OTF2_COLLECTIVE_OP_ALLGATHERV;
    case collectives::Operation::alltoall:
      return OTF2_COLLECTIVE_OP_ALLTOALL;
    case collectives::Operation::alltoallv:
      return OTF2_COLLECTIVE_OP_ALLTOALLV;
    case collectives::Operation::alltoallw:
      return OTF2_COLLECTIVE_OP_ALLTOALLW;
    case collectives::Operation::allreduce:
      return OTF2_COLLECTIVE_OP_ALLREDUCE;
    case collectives::Operation::reduce:
      return OTF2_COLLECTIVE_OP_REDUCE;
    case collectives::Operation::reduce_scatter:
      return OTF2_COLLECTIVE_OP_REDUCE_SCATTER;
    case collectives::Operation::scan:
      return OTF2_COLLECTIVE_OP_SCAN;
    case collectives::Operation::exscan:
      return OTF2_COLLECTIVE_OP_EXSCAN;
    case collectives::Operation::reduce_scatter_block:
      return OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK;
  }
  return OTF2_COLLECTIVE_OP_BARRIER;
}

/// The region role Score-P gives an MPI function.
OTF2_RegionRole role_of(const FunctionInfo& f) {
  const CallSemantics s = semantics_of(f);
  if (s.collective) {
    const auto op = collectives::parse_operation(f.pattern);
    if (!op) return OTF2_REGION_ROLE_COLL_OTHER;
    switch (collective_operation(*op, f.name)) {
      case collectives::Operation::barrier:
        return OTF2_REGION_ROLE_BARRIER;
      case collectives::Operation::bcast:
      case collectives::Operation::scatter:
      case collectives::Operation::scatterv:
        return OTF2_REGION_ROLE_COLL_ONE2ALL;
      case collectives::Operation::gather:
      case collectives::Operation::gatherv:
      case collectives::Operation::reduce:
        return OTF2_REGION_ROLE_COLL_ALL2ONE;
      case collectives::Operation::scan:
      case collectives::Operation::exscan:
        return OTF2_REGION_ROLE_COLL_OTHER;
      default:
        return OTF2_REGION_ROLE_COLL_ALL2ALL;
    }
  }
  switch (s.kind) {
    case CallKind::send:
    case CallKind::isend:
    case CallKind::recv:
    case CallKind::irecv:
    case CallKind::sendrecv:
    case CallKind::send_init:
    case CallKind::recv_init:
    case CallKind::start:
    case CallKind::wait:
    case CallKind::wait_some:
    case CallKind::test:
    case CallKind::probe:
    case CallKind::iprobe:
    case CallKind::mrecv:
    case CallKind::imrecv:
      return OTF2_REGION_ROLE_POINT2POINT;
    default:
      return OTF2_REGION_ROLE_FUNCTION;
  }
}

/// Definitions gathered while the events are written; written once all ranks are.
struct Definitions {
  std::map<std::string, OTF2_StringRef> strings;
  std::map<std::uint32_t, OTF2_RegionRef> regions;  ///< by function id
  struct Comm {
    OTF2_CommRef ref = 0;
    std::vector<std::int32_t> members;  ///< world ranks
    bool self = false;
  };
  std::map<std::uint64_t, Comm> comms;  ///< by commgauge communicator id
  struct Location {
    OTF2_LocationRef ref = 0;
    std::uint32_t rank = 0;
    std::uint32_t thread = 0;
    std::uint64_t events = 0;
  };
  std::vector<Location> locations;
  std::set<std::uint64_t> intercomms;  ///< by commgauge id: not exported
  std::uint64_t first_ns = UINT64_MAX, last_ns = 0;

  OTF2_StringRef string(const std::string& s) {
    const auto [it, added] = strings.emplace(s, static_cast<OTF2_StringRef>(strings.size()));
    (void)added;
    return it->second;
  }
  OTF2_RegionRef region(std::uint32_t function) {
    return regions.emplace(function, static_cast<OTF2_RegionRef>(regions.size())).first->second;
  }
};

/// Writes one rank's events (each thread to its own location).
class RankWriter {
 public:
  RankWriter(const TraceReader& trace, std::uint32_t rank, OTF2_Archive* archive, Definitions& defs,
             Otf2ExportResult& result)
      : trace_(trace), rank_(rank), archive_(archive), defs_(defs), result_(result) {}

  void run();

 private:
  struct Request {
    enum class Kind { send, recv, collective, none } kind = Kind::none;
    std::uint64_t comm = 0;
    Event collective;  ///< a nonblocking collective's record, for its completion
  };
  struct Persistent {
    bool send = true;
    std::int32_t peer = 0;
    std::int32_t tag = 0;
    std::uint64_t comm = 0;
    std::uint64_t bytes = 0;
  };

  [[noreturn]] void fail(const std::string& message) const {
    throw TraceError(fmt::format("rank {} event {}: cannot export to OTF2: {}", rank_,
                                 reader_ ? reader_->event_count() - 1 : 0, message));
  }
  void note(const std::string& n) {
    if (std::find(result_.notes.begin(), result_.notes.end(), n) == result_.notes.end())
      result_.notes.push_back(n);
  }
  OTF2_EvtWriter* writer(std::uint32_t thread);
  OTF2_TimeStamp time(std::int64_t tick);
  const Definitions::Comm& comm(std::uint64_t id) const;
  /// `world_rank`'s rank in communicator `id`.
  std::uint32_t local_rank(std::uint64_t id, std::int32_t world_rank) const;
  void process(const Event& e);
  void collective_end(const Event& e, OTF2_TimeStamp t, std::uint64_t request);
  void complete(const Completion& c, OTF2_TimeStamp t);

  const TraceReader& trace_;
  std::uint32_t rank_;
  OTF2_Archive* archive_;
  Definitions& defs_;
  Otf2ExportResult& result_;
  std::unique_ptr<RankReader> reader_;
  ClockMap clock_;
  std::map<std::uint32_t, std::pair<OTF2_EvtWriter*, std::size_t>> writers_;  ///< by thread
  OTF2_EvtWriter* w_ = nullptr;  ///< the current event's thread's
  OTF2_TimeStamp* last_ = nullptr;
  std::map<std::uint32_t, OTF2_TimeStamp> last_by_thread_;
  std::unordered_map<std::uint64_t, Request> requests_;
  std::unordered_map<std::uint64_t, Persistent> persistent_;
  std::unordered_map<std::uint64_t, std::pair<std::int32_t, std::int32_t>> messages_;
};

OTF2_EvtWriter* RankWriter::writer(std::uint32_t thread) {
  auto it = writers_.find(thread);
  if (it == writers_.end()) {
    Definitions::Location loc;
    // Thread 0 of rank r is location r, as Score-P numbers MPI ranks' master threads; other
    // threads follow all ranks.
    loc.ref = thread == 0 ? rank_
                          : static_cast<OTF2_LocationRef>(trace_.ranks() + defs_.locations.size());
    loc.rank = rank_;
    loc.thread = thread;
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive_, loc.ref);
    if (w == nullptr) fail("libotf2 returned no event writer");
    defs_.locations.push_back(loc);
    it = writers_.emplace(thread, std::make_pair(w, defs_.locations.size() - 1)).first;
  }
  return it->second.first;
}

OTF2_TimeStamp RankWriter::time(std::int64_t tick) {
  const double ns = clock_.root_ns(tick);
  // Clamped to the location's previous event: OTF2 requires each location's events in time order.
  auto t = static_cast<OTF2_TimeStamp>(std::max(0.0, std::round(ns)));
  if (t < *last_) t = *last_;
  *last_ = t;
  defs_.first_ns = std::min<std::uint64_t>(defs_.first_ns, t);
  defs_.last_ns = std::max<std::uint64_t>(defs_.last_ns, t);
  return t;
}

const Definitions::Comm& RankWriter::comm(std::uint64_t id) const {
  const auto it = defs_.comms.find(id);
  if (it == defs_.comms.end()) fail(fmt::format("communicator {:#x} used before its creation", id));
  return it->second;
}

std::uint32_t RankWriter::local_rank(std::uint64_t id, std::int32_t world_rank) const {
  const Definitions::Comm& c = comm(id);
  if (c.self) return 0;
  const auto it = std::find(c.members.begin(), c.members.end(), world_rank);
  if (it == c.members.end())
    fail(fmt::format("rank {} is not a member of communicator {:#x}", world_rank, id));
  return static_cast<std::uint32_t>(it - c.members.begin());
}

void RankWriter::collective_end(const Event& e, OTF2_TimeStamp t, std::uint64_t request) {
  const FunctionInfo* info = find_function(e.function);
  const auto op = collectives::parse_operation(info->pattern);
  if (!op) fail(fmt::format("no collective operation for {}", info->name));
  const collectives::Operation o = collective_operation(*op, info->name);
  const Definitions::Comm& c = comm(e.comm);
  const std::uint64_t n = c.self ? 1 : c.members.size();
  const std::uint64_t me = local_rank(e.comm, static_cast<std::int32_t>(rank_));
  std::uint32_t root = OTF2_UNDEFINED_UINT32;
  if (collectives::rooted(*op) && e.has(kRoot) && e.root >= 0) root = local_rank(e.comm, e.root);
  const CollectiveBytes bytes = collective_bytes(o, e, n, me, root);
  const OTF2_CommRef ref = c.ref;
  if (request == 0)
    check(OTF2_EvtWriter_MpiCollectiveEnd(w_, nullptr, t, to_otf2(o), ref, root, bytes.sent,
                                          bytes.received),
          "MpiCollectiveEnd");
  else
    check(OTF2_EvtWriter_NonBlockingCollectiveComplete(w_, nullptr, t, to_otf2(o), ref, root,
                                                       bytes.sent, bytes.received, request),
          "NonBlockingCollectiveComplete");
  ++result_.collectives;
}

void RankWriter::complete(const Completion& c, OTF2_TimeStamp t) {
  if (c.request == 0) return;
  const auto it = requests_.find(c.request);
  if (it == requests_.end()) return;  // an opaque call's request, or a persistent one inactive
  const Request r = it->second;
  requests_.erase(it);
  switch (r.kind) {
    case Request::Kind::send:
      if (c.cancelled)
        check(OTF2_EvtWriter_MpiRequestCancelled(w_, nullptr, t, c.request), "MpiRequestCancelled");
      else
        check(OTF2_EvtWriter_MpiIsendComplete(w_, nullptr, t, c.request), "MpiIsendComplete");
      return;
    case Request::Kind::recv:
      if (c.cancelled) {
        check(OTF2_EvtWriter_MpiRequestCancelled(w_, nullptr, t, c.request), "MpiRequestCancelled");
      } else if (c.source >= 0) {
        check(
            OTF2_EvtWriter_MpiIrecv(w_, nullptr, t, local_rank(r.comm, c.source), comm(r.comm).ref,
                                    static_cast<std::uint32_t>(c.tag), c.bytes, c.request),
            "MpiIrecv");
      }
      return;
    case Request::Kind::collective:
      collective_end(r.collective, t, c.request);
      return;
    case Request::Kind::none:
      return;
  }
}

void RankWriter::process(const Event& e) {
  if (e.kind == RecordKind::comm_create) {
    if (e.comm <= 1) return;  // MPI_COMM_WORLD and MPI_COMM_SELF are defined up front
    if (e.flag(kIntercomm) || e.remote_size > 0) {
      defs_.intercomms.insert(e.comm);
      return;
    }
    auto [it, added] = defs_.comms.emplace(e.comm, Definitions::Comm{});
    if (added) {
      it->second.ref = static_cast<OTF2_CommRef>(defs_.comms.size() - 1);
      it->second.members = e.members;
    } else if (it->second.members != e.members) {
      fail(fmt::format("communicator {:#x} has other members here than on another rank", e.comm));
    }
    return;
  }
  if (e.kind == RecordKind::poll_run) {
    note(
        "runs of failed MPI_Test/MPI_Iprobe calls are not exported: the trace keeps only their "
        "count and time, not each call");
    return;
  }
  if (e.kind != RecordKind::function) return;
  const FunctionInfo* info = find_function(e.function);
  if (info == nullptr) fail(fmt::format("unknown function id {}", e.function));
  w_ = writer(e.thread);
  last_ = &last_by_thread_[e.thread];
  const OTF2_RegionRef region = defs_.region(e.function);
  const OTF2_TimeStamp enter = time(e.start_tick);
  const OTF2_TimeStamp leave = time(e.end_tick);
  check(OTF2_EvtWriter_Enter(w_, nullptr, enter, region), "Enter");
  ++result_.calls;
  if (e.has(kComm) && (e.flag(kIntercomm) || defs_.intercomms.count(e.comm))) {
    // Every member's calls on it lose their records alike, so what remains still matches.
    note("calls on intercommunicators are exported as regions without MPI records");
    if (e.has(kRequest) && e.request != 0) requests_.erase(e.request);
    check(OTF2_EvtWriter_Leave(w_, nullptr, leave, region), "Leave");
    return;
  }
  if (e.has(kComm) && !defs_.comms.count(e.comm) && e.comm > 1)
    fail(fmt::format("communicator {:#x} used before its creation", e.comm));
  const CallSemantics& s = semantics_of(e.function);
  using K = Request::Kind;
  auto new_request = [&](std::uint64_t id, K kind, std::uint64_t comm_id) {
    Request& r = requests_[id];
    r = Request{};
    r.kind = kind;
    r.comm = comm_id;
    return &r;
  };
  auto send = [&](std::int32_t peer, std::uint64_t comm_id, std::int32_t tag, std::uint64_t bytes,
                  std::uint64_t request) {
    if (peer == kProcNull) {
      if (request != 0) new_request(request, K::none, comm_id);
      return;
    }
    const auto to = local_rank(comm_id, peer);
    const auto ref = comm(comm_id).ref;
    if (request == 0) {
      check(OTF2_EvtWriter_MpiSend(w_, nullptr, enter, to, ref, static_cast<std::uint32_t>(tag),
                                   bytes),
            "MpiSend");
    } else {
      new_request(request, K::send, comm_id);
      check(OTF2_EvtWriter_MpiIsend(w_, nullptr, enter, to, ref, static_cast<std::uint32_t>(tag),
                                    bytes, request),
            "MpiIsend");
    }
    ++result_.messages;
  };
  auto receive = [&](const Completion& c, std::uint64_t comm_id) {
    if (c.source < 0) return;  // MPI_PROC_NULL
    check(OTF2_EvtWriter_MpiRecv(w_, nullptr, leave, local_rank(comm_id, c.source),
                                 comm(comm_id).ref, static_cast<std::uint32_t>(c.tag), c.bytes),
          "MpiRecv");
  };
  switch (s.kind) {
    case CallKind::send:
      send(e.peer, e.comm, e.tag, e.bytes, 0);
      break;
    case CallKind::isend:
      send(e.peer, e.comm, e.tag, e.bytes, e.request);
      break;
    case CallKind::recv:
      if (!e.completions.empty()) receive(e.completions.front(), e.comm);
      break;
    case CallKind::irecv:
      new_request(e.request, K::recv, e.comm);
      check(OTF2_EvtWriter_MpiIrecvRequest(w_, nullptr, enter, e.request), "MpiIrecvRequest");
      break;
    case CallKind::sendrecv:
      send(e.peer, e.comm, e.tag, e.bytes, 0);
      if (!e.completions.empty()) receive(e.completions.front(), e.comm);
      break;
    case CallKind::send_init:
    case CallKind::recv_init:
      persistent_[e.request] = {s.kind == CallKind::send_init, e.peer, e.tag, e.comm, e.bytes};
      break;
    case CallKind::start:
      for (std::size_t i = 0; i < e.requests.size(); ++i) {
        const auto it = persistent_.find(e.requests[i]);
        if (it == persistent_.end()) fail("Start of an unknown persistent request");
        const Persistent& p = it->second;
        const std::uint64_t id = e.request + i;
        if (p.send) {
          send(p.peer, p.comm, p.tag, p.bytes, id);
        } else if (p.peer == kProcNull) {
          new_request(id, K::none, p.comm);
        } else {
          new_request(id, K::recv, p.comm);
          check(OTF2_EvtWriter_MpiIrecvRequest(w_, nullptr, enter, id), "MpiIrecvRequest");
        }
      }
      break;
    case CallKind::probe:
    case CallKind::iprobe:
      if ((info->pattern == "mprobe" || info->pattern == "improbe") && !e.completions.empty() &&
          e.completions.front().request != 0)
        messages_[e.completions.front().request] = {e.completions.front().source,
                                                    e.completions.front().tag};
      break;
    case CallKind::mrecv:
    case CallKind::imrecv: {
      const auto it = e.requests.empty() ? messages_.end() : messages_.find(e.requests.front());
      if (it == messages_.end()) fail("Mrecv of a message no Mprobe returned");
      Completion c;
      c.source = it->second.first;
      c.tag = it->second.second;
      messages_.erase(it);
      if (s.kind == CallKind::mrecv) {
        c.bytes = e.completions.empty() ? e.bytes : e.completions.front().bytes;
        receive(c, e.comm);
      } else {
        new_request(e.request, K::recv, e.comm);
        check(OTF2_EvtWriter_MpiIrecvRequest(w_, nullptr, enter, e.request), "MpiIrecvRequest");
      }
      break;
    }
    case CallKind::collective:
      if (e.has(kRequest)) {
        new_request(e.request, K::collective, e.comm)->collective = e;
        check(OTF2_EvtWriter_NonBlockingCollectiveRequest(w_, nullptr, enter, e.request),
              "NonBlockingCollectiveRequest");
      } else {
        check(OTF2_EvtWriter_MpiCollectiveBegin(w_, nullptr, enter), "MpiCollectiveBegin");
        collective_end(e, leave, 0);
      }
      break;
    case CallKind::comm_creation:
    case CallKind::comm_free: {
      // Score-P's record of communicator management: a collective over the communicator.
      check(OTF2_EvtWriter_MpiCollectiveBegin(w_, nullptr, enter), "MpiCollectiveBegin");
      const bool create = s.kind == CallKind::comm_creation;
      check(OTF2_EvtWriter_MpiCollectiveEnd(
                w_, nullptr, leave,
                create ? OTF2_COLLECTIVE_OP_CREATE_HANDLE : OTF2_COLLECTIVE_OP_DESTROY_HANDLE,
                comm(e.comm).ref, OTF2_UNDEFINED_UINT32, 0, 0),
            "MpiCollectiveEnd");
      break;
    }
    case CallKind::opaque:
      note("unmodeled MPI calls are exported as regions without MPI events");
      break;
    default:
      break;
  }
  if (s.completes_requests)
    for (const Completion& c : e.completions)
      complete(c, leave);
  check(OTF2_EvtWriter_Leave(w_, nullptr, leave, region), "Leave");
}

void RankWriter::run() {
  reader_ = std::make_unique<RankReader>(trace_.open_rank(rank_));
  clock_ = clock_map(trace_, *reader_);
  Event e;
  while (reader_->next(e))
    process(e);
  if (reader_->end() != RankEnd::complete)
    throw TraceError(fmt::format(
        "rank {} is truncated (the run did not finish): OTF2 export needs every rank's complete "
        "trace",
        rank_));
  for (auto& [thread, entry] : writers_) {
    uint64_t events = 0;
    check(OTF2_EvtWriter_GetNumberOfEvents(entry.first, &events), "GetNumberOfEvents");
    defs_.locations[entry.second].events = events;
    result_.events += events;
    check(OTF2_Archive_CloseEvtWriter(archive_, entry.first), "CloseEvtWriter");
  }
}

/// Closes the archive on every path out (a half-written archive is removed by the caller).
struct ArchiveCloser {
  OTF2_Archive* archive;
  ~ArchiveCloser() {
    if (archive != nullptr) OTF2_Archive_Close(archive);
  }
};

void write_definitions(OTF2_Archive* archive, const TraceReader& trace, Definitions& defs) {
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (g == nullptr) throw TraceError("OTF2: libotf2 returned no global definition writer");
  // Strings first (every later record refers to them): collect, then write in ref order.
  const auto& index = trace.index();
  std::vector<std::string> hosts;
  std::vector<std::size_t> placement(trace.ranks(), 0);
  if (index.contains("hosts") && index["hosts"].is_array())
    for (const auto& h : index["hosts"])
      hosts.push_back(h.is_string() ? h.get<std::string>() : h.dump());
  if (index.contains("placement") && index["placement"].is_array() &&
      index["placement"].size() == trace.ranks())
    for (std::uint32_t r = 0; r < trace.ranks(); ++r)
      if (index["placement"][r].is_number_unsigned())
        placement[r] = std::min<std::size_t>(index["placement"][r].get<std::size_t>(),
                                             hosts.empty() ? 0 : hosts.size() - 1);
  if (hosts.empty()) hosts.push_back("localhost");
  const OTF2_StringRef empty = defs.string("");
  const OTF2_StringRef machine = defs.string("machine");
  const OTF2_StringRef node = defs.string("node");
  const OTF2_StringRef mpi = defs.string("MPI");
  for (const auto& h : hosts)
    defs.string(h);
  for (std::uint32_t r = 0; r < trace.ranks(); ++r)
    defs.string(fmt::format("MPI Rank {}", r));
  for (const auto& loc : defs.locations)
    defs.string(loc.thread == 0 ? std::string("Master thread")
                                : fmt::format("Thread {}", loc.thread));
  for (const auto& [function, ref] : defs.regions)
    defs.string(std::string(function_name(function)));
  for (const auto& [id, c] : defs.comms)
    defs.string(id == 0   ? "MPI_COMM_WORLD"
                : id == 1 ? "MPI_COMM_SELF"
                          : fmt::format("comm {:#x}", id));
  std::vector<const std::string*> by_ref(defs.strings.size());
  for (const auto& [s, ref] : defs.strings)
    by_ref[ref] = &s;
  for (std::size_t ref = 0; ref < by_ref.size(); ++ref)
    check(
        OTF2_GlobalDefWriter_WriteString(g, static_cast<OTF2_StringRef>(ref), by_ref[ref]->c_str()),
        "WriteString");

  const std::uint64_t length = defs.last_ns >= defs.first_ns ? defs.last_ns - defs.first_ns : 0;
  check(OTF2_GlobalDefWriter_WriteClockProperties(
            g, 1000000000, defs.first_ns == UINT64_MAX ? 0 : defs.first_ns, length, 0),
        "WriteClockProperties");
  check(OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, mpi, OTF2_PARADIGM_CLASS_PROCESS),
        "WriteParadigm");
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine, machine,
                                                 OTF2_UNDEFINED_SYSTEM_TREE_NODE),
        "WriteSystemTreeNode");
  for (std::size_t h = 0; h < hosts.size(); ++h)
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, static_cast<OTF2_SystemTreeNodeRef>(h + 1),
                                                   defs.string(hosts[h]), node, 0),
          "WriteSystemTreeNode");
  for (std::uint32_t r = 0; r < trace.ranks(); ++r)
    check(OTF2_GlobalDefWriter_WriteLocationGroup(
              g, r, defs.string(fmt::format("MPI Rank {}", r)), OTF2_LOCATION_GROUP_TYPE_PROCESS,
              static_cast<OTF2_SystemTreeNodeRef>(placement[r] + 1), OTF2_UNDEFINED_LOCATION_GROUP),
          "WriteLocationGroup");
  std::sort(defs.locations.begin(), defs.locations.end(),
            [](const auto& a, const auto& b) { return a.ref < b.ref; });
  for (const auto& loc : defs.locations)
    check(OTF2_GlobalDefWriter_WriteLocation(
              g, loc.ref,
              defs.string(loc.thread == 0 ? std::string("Master thread")
                                          : fmt::format("Thread {}", loc.thread)),
              OTF2_LOCATION_TYPE_CPU_THREAD, loc.events, loc.rank),
          "WriteLocation");
  // Definitions go out in reference order (readers warn of any other).
  std::vector<std::pair<OTF2_RegionRef, std::uint32_t>> regions;
  for (const auto& [function, ref] : defs.regions)
    regions.emplace_back(ref, function);
  std::sort(regions.begin(), regions.end());
  for (const auto& [ref, function] : regions) {
    const FunctionInfo* info = find_function(function);
    const OTF2_StringRef name = defs.string(std::string(function_name(function)));
    check(OTF2_GlobalDefWriter_WriteRegion(
              g, ref, name, name, empty,
              info ? role_of(*info) : OTF2_RegionRole{OTF2_REGION_ROLE_FUNCTION}, OTF2_PARADIGM_MPI,
              OTF2_REGION_FLAG_NONE, empty, 0, 0),
          "WriteRegion");
  }
  // Groups: the world's locations (thread 0 of each rank, in rank order), then one group of
  // world ranks per communicator.
  std::vector<std::uint64_t> world(trace.ranks());
  for (std::uint32_t r = 0; r < trace.ranks(); ++r)
    world[r] = r;
  OTF2_GroupRef next_group = 0;
  check(OTF2_GlobalDefWriter_WriteGroup(g, next_group++, empty, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                        static_cast<std::uint32_t>(world.size()), world.data()),
        "WriteGroup");
  std::vector<std::pair<OTF2_CommRef, std::uint64_t>> comms;
  for (const auto& [id, c] : defs.comms)
    comms.emplace_back(c.ref, id);
  std::sort(comms.begin(), comms.end());
  for (const auto& [ref, id] : comms) {
    const Definitions::Comm& c = defs.comms.at(id);
    const OTF2_GroupRef group = next_group++;
    if (c.self) {
      check(OTF2_GlobalDefWriter_WriteGroup(g, group, empty, OTF2_GROUP_TYPE_COMM_SELF,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 0, nullptr),
            "WriteGroup");
    } else {
      std::vector<std::uint64_t> members(c.members.begin(), c.members.end());
      check(OTF2_GlobalDefWriter_WriteGroup(
                g, group, empty, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(members.size()), members.data()),
            "WriteGroup");
    }
    const std::string name = id == 0   ? "MPI_COMM_WORLD"
                             : id == 1 ? "MPI_COMM_SELF"
                                       : fmt::format("comm {:#x}", id);
    check(OTF2_GlobalDefWriter_WriteComm(g, c.ref, defs.string(name), group, OTF2_UNDEFINED_COMM,
                                         OTF2_COMM_FLAG_NONE),
          "WriteComm");
  }
}

}  // namespace

Otf2ExportResult export_otf2(const TraceReader& trace, const fs::path& out, bool replace) {
  if (trace.ranks() == 0) throw TraceError("the trace has no ranks");
  if (!trace.missing_ranks().empty())
    throw TraceError(fmt::format("rank {} is missing from the trace", trace.missing_ranks()[0]));
  std::error_code ec;
  const auto exists = [&out, &ec](const char* name) {
    return fs::exists(fs::symlink_status(out / name, ec));
  };
  const bool old_archive = exists("traces.otf2") || exists("traces") || exists("traces.def");
  if (old_archive && !replace)
    throw InputError(out.string(),
                     "holds an OTF2 archive \"traces\" already; remove it, choose another "
                     "directory or give --force to replace it");
  if (old_archive) {
    // Only an archive's own parts are replaced, never a user's file or a symlink by that name.
    const bool ours = (!exists("traces.otf2") || (!fs::is_symlink(out / "traces.otf2", ec) &&
                                                  fs::is_regular_file(out / "traces.otf2", ec))) &&
                      (!exists("traces.def") || (!fs::is_symlink(out / "traces.def", ec) &&
                                                 fs::is_regular_file(out / "traces.def", ec))) &&
                      (!exists("traces") || (!fs::is_symlink(out / "traces", ec) &&
                                             fs::is_directory(out / "traces", ec)));
    if (!ours)
      throw InputError(out.string(),
                       "holds files named like an OTF2 archive (traces.otf2, "
                       "traces.def, traces/) that are not one; refusing to replace "
                       "them");
  }
  // Written into a fresh directory beside `out` and moved into it when whole, so that a failure
  // leaves no half archive behind.
  // The parent is created as a NewDirectory too: a failed export leaves no directory it made.
  const fs::path parent = fs::absolute(out).parent_path();
  NewDirectory parent_directory(parent);
  std::string scratch_template = (parent / ".commgauge-otf2-XXXXXX").string();
  if (mkdtemp(scratch_template.data()) == nullptr)
    throw OutputError(parent.string(),
                      std::string("cannot create a scratch directory: ") + std::strerror(errno));
  const fs::path scratch = scratch_template;
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      if (!dir.empty()) fs::remove_all(dir, ignored);
    }
  } cleanup{scratch};

  Otf2ExportResult result;
  result.ranks = trace.ranks();
  Definitions defs;
  {
    const Otf2ErrorCapture errors(out);
    OTF2_Archive* archive =
        OTF2_Archive_Open(scratch.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
                          4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (archive == nullptr) throw TraceError(scratch.string() + ": OTF2 cannot create an archive");
    ArchiveCloser closer{archive};
    check(OTF2_Archive_SetFlushCallbacks(archive, &kFlushCallbacks, nullptr), "SetFlushCallbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "SetSerialCollectiveCallbacks");
    check(
        OTF2_Archive_SetCreator(archive, fmt::format("commgauge {}", commgauge::kVersion).c_str()),
        "SetCreator");
    check(OTF2_Archive_OpenEvtFiles(archive), "OpenEvtFiles");
    // MPI_COMM_WORLD and MPI_COMM_SELF exist before any record names them.
    Definitions::Comm world;
    world.members.resize(trace.ranks());
    for (std::uint32_t r = 0; r < trace.ranks(); ++r)
      world.members[r] = static_cast<std::int32_t>(r);
    defs.comms[0] = world;
    Definitions::Comm self;
    self.ref = 1;
    self.self = true;
    defs.comms[1] = self;
    for (std::uint32_t r = 0; r < trace.ranks(); ++r)
      RankWriter(trace, r, archive, defs, result).run();
    check(OTF2_Archive_CloseEvtFiles(archive), "CloseEvtFiles");
    // Local definition files, empty: the global definitions hold everything (Score-P writes
    // mapping tables here; our references are global already).
    check(OTF2_Archive_OpenDefFiles(archive), "OpenDefFiles");
    for (const auto& loc : defs.locations) {
      OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(archive, loc.ref);
      if (d == nullptr) throw TraceError("OTF2: libotf2 returned no definition writer");
      check(OTF2_Archive_CloseDefWriter(archive, d), "CloseDefWriter");
    }
    check(OTF2_Archive_CloseDefFiles(archive), "CloseDefFiles");
    write_definitions(archive, trace, defs);
    closer.archive = nullptr;
    check(OTF2_Archive_Close(archive), "Close");
  }
  result.locations = defs.locations.size();
  result.communicators = defs.comms.size();
  NewDirectory directory(out);  // gone again if the archive cannot be moved in
  // The old archive's parts go into the scratch directory (removed with it) just before the
  // new ones take their names; the anchor file last, so a reader never finds a new anchor over
  // old event files.
  fs::create_directories(scratch / "old", ec);
  for (const char* name : {"traces", "traces.def", "traces.otf2"}) {
    if (exists(name)) {
      fs::rename(out / name, scratch / "old" / name, ec);
      if (ec)
        throw OutputError(out.string(),
                          std::string("cannot move the old ") + name + " aside: " + ec.message());
    }
    fs::rename(scratch / name, out / name, ec);
    if (ec)
      throw OutputError(out.string(), std::string("cannot move ") + name + ": " + ec.message());
  }
  directory.keep();
  parent_directory.keep();
  return result;
}

#endif

}  // namespace commgauge::trace
