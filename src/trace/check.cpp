#include "trace/check.hpp"
#include "trace/call_semantics.hpp"
#include "trace/json_fields.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "trace/function_ids.hpp"
#include "trace/functions.hpp"

namespace commgauge::trace {

namespace {

/// Where an event is, for messages.
struct Site {
  std::uint32_t rank = 0;
  std::uint64_t event = 0;
  std::uint32_t function = 0;
};

std::string where(const Site& s) {
  return fmt::format("rank {} event {} ({})", s.rank, s.event, function_name(s.function));
}

struct PendingSend {
  Site site;
  std::uint64_t bytes = 0;
  double start_ns = 0;  ///< on rank 0's clock
};

struct PendingRecv {
  Site site;
  std::uint64_t received = 0;
  std::uint64_t posted = 0;
  double end_ns = 0;
};

/// (communicator, source, destination, tag): MPI's non-overtaking order holds per channel.
using Channel = std::tuple<std::uint64_t, std::int32_t, std::int32_t, std::int32_t>;

/// A channel's receives in the order the receiving rank posted them (its event index): MPI
/// matches a channel's messages, in send order, to its receives in posting order, however the
/// program later completes them (Waitany, Testsome). A receive that names its source and tag
/// holds its place from the moment it is posted and is filled when it completes; a wildcard
/// receive takes its place when its completion shows the channel.
struct RecvSlot {
  std::uint64_t posted_event = 0;
  bool filled = false;
  PendingRecv recv;
};

struct ChannelQueues {
  std::deque<PendingSend> sends;
  std::deque<RecvSlot> recvs;
};

/// What a live request stands for.
struct RequestState {
  enum class Kind { send, recv, collective, other } kind = Kind::other;
  Site site;
  std::uint64_t comm = 0;
  std::int32_t peer = 0;  ///< send: destination; recv: asked source (or the probed one)
  std::int32_t tag = 0;
  std::uint64_t bytes = 0;
  double start_ns = 0;
  bool reserved = false;  ///< recv: holds a slot in its channel since it was posted
};

/// A wildcard receive posted and not yet completed: until it completes, no later-posted receive
/// of a channel it could match may take that channel's next message (it may be its own).
struct PendingWildcard {
  std::uint64_t comm = 0;
  std::int32_t source = 0;  ///< kAnySource or a rank
  std::int32_t tag = 0;     ///< -1: any tag
};

/// The parameters of a persistent request, used at each Start.
struct PersistentInit {
  RequestState::Kind kind = RequestState::Kind::send;
  std::uint64_t comm = 0;
  std::int32_t peer = 0;
  std::int32_t tag = 0;
  std::uint64_t bytes = 0;
  std::uint32_t function = 0;
};

struct ProbedMessage {
  std::uint64_t comm = 0;
  std::int32_t source = 0;
  std::int32_t tag = 0;
  std::uint64_t bytes = 0;
};

struct RankState {
  std::unique_ptr<RankReader> reader;
  ClockMap clock;
  double sync_error_ns = 0;
  Event next;
  bool has_next = false;
  bool failed = false;
  std::unordered_map<std::uint64_t, RequestState> requests;
  std::unordered_map<std::uint64_t, PersistentInit> persistent;
  std::unordered_map<std::uint64_t, ProbedMessage> messages;
  std::map<std::uint64_t, PendingWildcard> wildcards;  ///< by posting event
  std::vector<Channel> held_back;  ///< channels into this rank a pending wildcard stopped
  std::map<std::uint64_t, std::uint64_t> collective_counts;  ///< per communicator
  std::set<std::uint64_t> comms{0, 1};
  bool initialized = false;  ///< MPI_Init or MPI_Init_thread seen
  bool finalized = false;    ///< MPI_Finalize or MPI_Abort seen
  bool reported_order = false;
  /// The tick the latest call ended: of the thread that called MPI_Init (also every event
  /// without a thread field), and of each other thread (a map only where there are threads).
  std::optional<std::int64_t> main_thread_end_tick;
  std::unordered_map<std::uint32_t, std::int64_t> other_thread_end_ticks;
};

struct CollectiveEntry {
  Site first;
  std::uint32_t function = 0;
  std::int32_t root = 0;
  bool has_root = false;
  std::optional<std::uint64_t> bytes;  ///< for operations whose size every member passes alike
  std::uint64_t seen = 0;
};

struct CommRecord {
  std::vector<std::int32_t> members;  ///< sorted union of the groups
  std::vector<std::int32_t> ordered;  ///< as the first rank recorded them (ranks in the group)
  std::uint32_t first_rank = 0;
  std::uint32_t remote_size = 0;  ///< an intercommunicator's remote group; 0: intracommunicator
};

bool same_size_on_all_members(std::string_view pattern) {
  return pattern == "bcast" || pattern == "reduce" || pattern == "allreduce" ||
         pattern == "reduce_scatter_block";
}

bool rooted(std::string_view pattern) {
  return pattern == "bcast" || pattern == "reduce" || pattern == "gather" || pattern == "scatter" ||
         pattern == "gatherv" || pattern == "scatterv";
}

class Checker {
 public:
  Checker(const TraceReader& trace, std::size_t max_issues)
      : trace_(trace), max_issues_(max_issues) {}

  CheckResult run();

 private:
  void issue(CheckIssue::Severity s, std::int64_t rank, std::int64_t event, std::string message) {
    (s == CheckIssue::Severity::error ? result_.errors : result_.warnings)++;
    if (result_.issues.size() < max_issues_)
      result_.issues.push_back({s, rank, event, std::move(message)});
  }
  void error(const Site& s, std::string m) {
    issue(CheckIssue::Severity::error, s.rank, static_cast<std::int64_t>(s.event), std::move(m));
  }
  void warning(const Site& s, std::string m) {
    issue(CheckIssue::Severity::warning, s.rank, static_cast<std::int64_t>(s.event), std::move(m));
  }

  bool advance(std::uint32_t r);
  void process(std::uint32_t r, const Event& e);
  void check_thread_order(RankState& rs, const Site& s, const Event& e, double start_ns);
  void post_send(const Site& s, std::uint64_t comm, std::int32_t dest, std::int32_t tag,
                 std::uint64_t bytes, double start_ns);
  void post_recv(const Site& s, std::uint64_t comm, const Completion& c, std::uint64_t posted,
                 std::int32_t asked_source, std::int32_t asked_tag, double end_ns);
  /// A receive request naming its source and tag takes its channel slot when it is posted.
  bool reserve_recv(std::uint32_t r, const Site& s, std::uint64_t comm, std::int32_t source,
                    std::int32_t tag);
  void drain(const Channel& ch);
  void match(const PendingSend& send, const PendingRecv& recv, const Channel& ch);
  void complete(std::uint32_t r, const Site& s, const Completion& c, double end_ns);
  void check_collective(std::uint32_t r, const Site& s, const Event& e, std::string_view pattern);
  void record_comm(std::uint32_t r, const Site& s, const Event& e);
  void start_persistent(std::uint32_t r, const Site& s, std::uint64_t init_id, std::uint64_t new_id,
                        double start_ns);
  std::uint64_t participants(std::uint64_t comm) const;
  void finish();

  const TraceReader& trace_;
  std::size_t max_issues_;
  CheckResult result_;
  std::vector<RankState> ranks_;
  std::map<Channel, ChannelQueues> channels_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, CollectiveEntry> collectives_;
  std::map<std::uint64_t, CommRecord> comms_;
};

bool Checker::advance(std::uint32_t r) {
  RankState& s = ranks_[r];
  if (s.failed) return false;
  try {
    s.has_next = s.reader->next(s.next);
  } catch (const TraceError& e) {
    issue(CheckIssue::Severity::error, r, static_cast<std::int64_t>(s.reader->event_count()),
          e.what());
    s.failed = true;
    s.has_next = false;
  }
  return s.has_next;
}

CheckResult Checker::run() {
  for (std::uint32_t r : trace_.missing_ranks())
    issue(CheckIssue::Severity::error, r, -1, "rank missing: the trace has no data for it");
  ranks_.resize(trace_.ranks());
  using Item = std::pair<double, std::uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  for (std::uint32_t r = 0; r < trace_.ranks(); ++r) {
    if (std::find(trace_.missing_ranks().begin(), trace_.missing_ranks().end(), r) !=
        trace_.missing_ranks().end()) {
      ranks_[r].failed = true;
      continue;
    }
    try {
      ranks_[r].reader = std::make_unique<RankReader>(trace_.open_rank(r));
    } catch (const TraceError& e) {
      issue(CheckIssue::Severity::error, r, -1, e.what());
      ranks_[r].failed = true;
      continue;
    }
    // A rank's own count of the job's ranks against the index's (an index edited or from
    // another run): named once, at the rank, rather than only through its sends past the end.
    const nlohmann::json& header = ranks_[r].reader->header();
    if (header.contains("size") && header["size"].is_number_unsigned() &&
        header["size"].get<std::uint64_t>() != trace_.ranks()) {
      issue(CheckIssue::Severity::error, r, -1,
            fmt::format("the rank's header says a job of {} ranks, the trace's index {}",
                        header["size"].get<std::uint64_t>(), trace_.ranks()));
    }
    ranks_[r].clock = clock_map(trace_, *ranks_[r].reader);
    ranks_[r].sync_error_ns = ranks_[r].clock.error_bound_ns();
    if (advance(r)) queue.push({ranks_[r].clock.root_ns(ranks_[r].next.start_tick), r});
  }
  while (!queue.empty()) {
    const std::uint32_t r = queue.top().second;
    queue.pop();
    const Event e = ranks_[r].next;  // a copy: advance() reuses the slot
    process(r, e);
    ++result_.events;
    if (advance(r)) queue.push({ranks_[r].clock.root_ns(ranks_[r].next.start_tick), r});
  }
  finish();
  return result_;
}

void Checker::post_send(const Site& s, std::uint64_t comm, std::int32_t dest, std::int32_t tag,
                        std::uint64_t bytes, double start_ns) {
  if (dest == kProcNull) return;
  if (dest < 0 || static_cast<std::uint32_t>(dest) >= ranks_.size()) {
    error(s, fmt::format("send to rank {}, which does not exist", dest));
    return;
  }
  if (tag < 0) {
    error(s, fmt::format("send with tag {} (a send's tag is 0 or more)", tag));
    return;
  }
  const Channel ch{comm, static_cast<std::int32_t>(s.rank), dest, tag};
  channels_[ch].sends.push_back(PendingSend{s, bytes, start_ns});
  drain(ch);
}

bool Checker::reserve_recv(std::uint32_t r, const Site& s, std::uint64_t comm, std::int32_t source,
                           std::int32_t tag) {
  if (source == kProcNull) return false;
  if (source < 0 || static_cast<std::uint32_t>(source) >= ranks_.size() || tag < 0) {
    ranks_[r].wildcards[s.event] = PendingWildcard{comm, source, tag};
    return false;
  }
  ChannelQueues& q = channels_[Channel{comm, source, static_cast<std::int32_t>(r), tag}];
  q.recvs.push_back(RecvSlot{s.event, false, {}});
  return true;
}

void Checker::drain(const Channel& ch) {
  const auto it = channels_.find(ch);
  if (it == channels_.end()) return;
  ChannelQueues& q = it->second;
  // (Plain copies, not structured bindings: clang 14 cannot capture those in a lambda.)
  const std::uint64_t comm = std::get<0>(ch);
  const std::int32_t source = std::get<1>(ch), dest = std::get<2>(ch), tag = std::get<3>(ch);
  // A pending wildcard receive posted before the front one that could match this channel may
  // still be the one the next message went to.
  const auto& wildcards = ranks_[static_cast<std::size_t>(dest)].wildcards;
  const auto held_back = [&](std::uint64_t posted_event) {
    for (auto w = wildcards.begin(); w != wildcards.end() && w->first < posted_event; ++w) {
      const PendingWildcard& p = w->second;
      if (p.comm == comm && (p.source == kAnySource || p.source == source) &&
          (p.tag == -1 || p.tag == tag))
        return true;
    }
    return false;
  };
  while (!q.sends.empty() && !q.recvs.empty() && q.recvs.front().filled) {
    if (held_back(q.recvs.front().posted_event)) {
      ranks_[static_cast<std::size_t>(dest)].held_back.push_back(ch);
      return;
    }
    const PendingSend send = q.sends.front();
    const PendingRecv recv = q.recvs.front().recv;
    q.sends.pop_front();
    q.recvs.pop_front();
    match(send, recv, ch);
  }
  if (q.sends.empty() && q.recvs.empty()) channels_.erase(it);
}

void Checker::post_recv(const Site& s, std::uint64_t comm, const Completion& c,
                        std::uint64_t posted, std::int32_t asked_source, std::int32_t asked_tag,
                        double end_ns) {
  if (c.cancelled) return;
  if (c.source == kProcNull || (asked_source == kProcNull && c.source < 0)) return;
  if (c.source < 0 || static_cast<std::uint32_t>(c.source) >= ranks_.size()) {
    error(s, fmt::format("receive completed from rank {}, which does not exist", c.source));
    return;
  }
  if (asked_source != kAnySource && asked_source != c.source)
    error(s, fmt::format("receive from rank {} completed with a message from rank {}", asked_source,
                         c.source));
  if (asked_tag != -1 && asked_tag != c.tag)
    error(s, fmt::format("receive with tag {} completed with tag {}", asked_tag, c.tag));
  const Channel ch{comm, c.source, static_cast<std::int32_t>(s.rank), c.tag};
  auto& recvs = channels_[ch].recvs;
  const PendingRecv recv{s, c.bytes, posted, end_ns};
  // Its slot: its own if it holds one since it was posted, else in posting order (s.event is
  // the posting call's index on this rank).
  auto slot = std::find_if(recvs.begin(), recvs.end(), [&](const RecvSlot& x) {
    return !x.filled && x.posted_event == s.event;
  });
  if (slot == recvs.end()) {
    slot = std::find_if(recvs.begin(), recvs.end(),
                        [&](const RecvSlot& x) { return x.posted_event > s.event; });
    slot = recvs.insert(slot, RecvSlot{s.event, false, {}});
  }
  slot->filled = true;
  slot->recv = recv;
  drain(ch);
}

void Checker::match(const PendingSend& send, const PendingRecv& recv, const Channel& ch) {
  ++result_.messages_matched;
  if (recv.received != send.bytes)
    error(recv.site, fmt::format("received {} bytes, but the matching send ({}) sent {} (tag {})",
                                 recv.received, where(send.site), send.bytes, std::get<3>(ch)));
  if (send.bytes > recv.posted)
    error(recv.site, fmt::format("posted for {} bytes, but the matching send ({}) sent {}: "
                                 "truncation",
                                 recv.posted, where(send.site), send.bytes));
  const double tolerance_ns =
      ranks_[send.site.rank].sync_error_ns + ranks_[recv.site.rank].sync_error_ns + 1000.0;
  if (recv.end_ns + tolerance_ns < send.start_ns)
    warning(recv.site, fmt::format("the receive ended {:.3f} us before its send ({}) started "
                                   "(clock mapping error or a misrecorded time)",
                                   (send.start_ns - recv.end_ns) * 1e-3, where(send.site)));
}

void Checker::complete(std::uint32_t r, const Site& s, const Completion& c, double end_ns) {
  if (c.request == 0) return;
  RankState& rs = ranks_[r];
  const auto it = rs.requests.find(c.request);
  if (it == rs.requests.end()) {
    error(s, fmt::format("completes request {}, which is not active (never created, or "
                         "completed already)",
                         c.request));
    return;
  }
  const RequestState req = it->second;
  rs.requests.erase(it);
  ++result_.requests_completed;
  const bool wildcard = req.kind == RequestState::Kind::recv && !req.reserved &&
                        ranks_[r].wildcards.erase(req.site.event) > 0;
  if (req.kind == RequestState::Kind::recv) {
    if (req.reserved && (c.cancelled || c.source != req.peer || c.tag != req.tag)) {
      // Its slot is not where the message came from (an error post_recv reports) or it never
      // received: give the place up.
      const Channel ch{req.comm, req.peer, static_cast<std::int32_t>(r), req.tag};
      if (auto q = channels_.find(ch); q != channels_.end()) {
        auto& recvs = q->second.recvs;
        const auto pos = std::find_if(recvs.begin(), recvs.end(), [&](const RecvSlot& x) {
          return !x.filled && x.posted_event == req.site.event;
        });
        if (pos != recvs.end()) recvs.erase(pos);
        drain(ch);
      }
    }
    post_recv(req.site, req.comm, c, req.bytes, req.peer, req.tag, end_ns);
    if (wildcard) {
      // It took its place in its channel (post_recv); the channels it held back may go on.
      const std::vector<Channel> held = std::move(ranks_[r].held_back);
      ranks_[r].held_back.clear();
      for (const auto& ch : held)
        drain(ch);
    }
  } else if (req.kind == RequestState::Kind::send && c.cancelled) {
    // A cancelled send never arrives: take it back out of its channel.
    const Channel ch{req.comm, static_cast<std::int32_t>(r), req.peer, req.tag};
    auto q = channels_.find(ch);
    if (q != channels_.end()) {
      auto& sends = q->second.sends;
      const auto pos = std::find_if(sends.begin(), sends.end(), [&](const PendingSend& p) {
        return p.site.event == req.site.event;
      });
      if (pos != sends.end()) sends.erase(pos);
    }
  }
}

void Checker::start_persistent(std::uint32_t r, const Site& s, std::uint64_t init_id,
                               std::uint64_t new_id, double start_ns) {
  RankState& rs = ranks_[r];
  const auto it = rs.persistent.find(init_id);
  if (it == rs.persistent.end()) {
    error(s, fmt::format("starts request {}, which no *_init call created", init_id));
    return;
  }
  const PersistentInit& p = it->second;
  RequestState req{p.kind, s, p.comm, p.peer, p.tag, p.bytes, start_ns};
  req.site.function = p.function;
  if (p.kind == RequestState::Kind::send) post_send(s, p.comm, p.peer, p.tag, p.bytes, start_ns);
  if (p.kind == RequestState::Kind::recv) req.reserved = reserve_recv(r, s, p.comm, p.peer, p.tag);
  if (rs.requests.count(new_id))
    error(s, fmt::format("request id {} is started while still active", new_id));
  rs.requests[new_id] = req;
}

std::uint64_t Checker::participants(std::uint64_t comm) const {
  if (comm == 0) return ranks_.size();
  const auto it = comms_.find(comm);
  return it == comms_.end() ? 0 : it->second.members.size();
}

void Checker::check_collective(std::uint32_t r, const Site& s, const Event& e,
                               std::string_view pattern) {
  if (e.comm == 1) return;  // MPI_COMM_SELF: one member
  RankState& rs = ranks_[r];
  if (!rs.comms.count(e.comm)) {
    error(s, fmt::format("uses communicator {:#x} before any comm_create record for it", e.comm));
    return;
  }
  // Per-member counts (v and w collectives) have one entry per member: the replay indexes them
  // by member. On an intercommunicator they count the remote group, which the replay (running
  // collectives over the union of the groups) cannot follow.
  const std::uint64_t members = participants(e.comm);
  const auto icomm = comms_.find(e.comm);
  const bool inter = icomm != comms_.end() && icomm->second.remote_size > 0;
  // The tracer flags a call on an intercommunicator; the readers lower such a call differently
  // (trace-export needs its groups), so the flag must match what the communicator is.
  if (e.flag(kIntercomm) != inter) {
    error(s, fmt::format("{} is flagged as a call on {} intercommunicator, but communicator {:#x} "
                         "is {}",
                         function_name(e.function), inter ? "no" : "an", e.comm,
                         inter ? "an intercommunicator" : "not one"));
  }
  for (const auto* counts : {&e.counts, &e.recv_counts}) {
    if (counts->empty() || members == 0) continue;
    if (inter) {
      error(s, fmt::format("{} with per-member counts on intercommunicator {:#x} cannot be "
                           "replayed",
                           function_name(e.function), e.comm));
      break;
    }
    if (counts->size() != members) {
      error(s, fmt::format("{} has {} per-member counts, but communicator {:#x} has {} members",
                           function_name(e.function), counts->size(), e.comm, members));
      break;
    }
  }
  const std::uint64_t k = rs.collective_counts[e.comm]++;
  CollectiveEntry& c = collectives_[{e.comm, k}];
  ++result_.collectives_checked;
  const bool first = c.seen == 0;
  ++c.seen;
  if (first) {
    c.first = s;
    c.function = e.function;
    c.has_root = rooted(pattern) && e.has(kRoot);
    c.root = e.root;
    if (same_size_on_all_members(pattern) && e.has(kBytes)) c.bytes = e.bytes;
  } else {
    if (c.function != e.function)
      error(s,
            fmt::format("collective #{} on communicator {:#x} is {} here but {} at {}", k, e.comm,
                        function_name(e.function), function_name(c.function), where(c.first)));
    else if (c.has_root && e.has(kRoot) && e.root != c.root && e.root >= 0 && c.root >= 0)
      error(s, fmt::format("{} with root {} here but root {} at {}", function_name(e.function),
                           e.root, c.root, where(c.first)));
    else if (c.bytes && e.has(kBytes) && *c.bytes != e.bytes)
      error(s, fmt::format("{} of {} bytes here but {} bytes at {}", function_name(e.function),
                           e.bytes, *c.bytes, where(c.first)));
  }
  if (c.seen == participants(e.comm)) collectives_.erase({e.comm, k});
}

void Checker::record_comm(std::uint32_t r, const Site& s, const Event& e) {
  ++result_.communicators;
  std::vector<std::int32_t> members = e.members;
  std::sort(members.begin(), members.end());
  ranks_[r].comms.insert(e.comm);
  // This rank is in its local group: the list's first n - remote_size members (format 9).
  const auto local_end = e.members.end() - static_cast<std::ptrdiff_t>(std::min<std::size_t>(
                                               e.remote_size, e.members.size()));
  if (std::find(e.members.begin(), local_end, static_cast<std::int32_t>(r)) == local_end)
    error(s, fmt::format("communicator {:#x} is recorded without this rank among its {}members",
                         e.comm, e.remote_size > 0 ? "local group's " : ""));
  auto [it, inserted] =
      comms_.try_emplace(e.comm, CommRecord{members, e.members, r, e.remote_size});
  if (inserted) return;
  const CommRecord& first = it->second;
  // An intracommunicator's order is its ranks' order: the same list on every member (the OTF2
  // export refused a reversed one that this check had passed).
  if ((first.remote_size > 0) != (e.remote_size > 0))
    error(s, fmt::format("communicator {:#x} is an {} here but an {} at rank {}", e.comm,
                         e.remote_size > 0 ? "intercommunicator" : "intracommunicator",
                         first.remote_size > 0 ? "intercommunicator" : "intracommunicator",
                         first.first_rank));
  else if (first.members != members || (e.remote_size == 0 && first.ordered != e.members))
    error(s, fmt::format("communicator {:#x} has other members here than at rank {} (ids must "
                         "agree across members, in the same order)",
                         e.comm, first.first_rank));
}

// One thread's calls follow each other: a call that starts before its thread's previous call
// ended means a clock that stepped back (across cores) or a damaged trace. Threads of one rank
// overlap freely (MPI_THREAD_MULTIPLE; events are written as calls complete). A warning, not an
// error: the replay counts no computation before such a call and goes on.
void Checker::check_thread_order(RankState& rs, const Site& s, const Event& e, double start_ns) {
  const std::uint32_t thread = e.has(kThread) ? e.thread : 0;
  std::int64_t* previous = nullptr;
  if (thread == 0) {  // the common case, on every event of a check: no hashing
    if (!rs.main_thread_end_tick) {
      rs.main_thread_end_tick = e.end_tick;
      return;
    }
    previous = &*rs.main_thread_end_tick;
  } else {
    const auto [it, first] = rs.other_thread_end_ticks.try_emplace(thread, e.end_tick);
    if (first) return;
    previous = &it->second;
  }
  if (e.start_tick < *previous)
    warning(s, fmt::format("starts {:.3f} us before the previous call of its thread (thread {}) "
                           "ended: a clock that stepped back or a damaged trace; the replay "
                           "counts no computation before it",
                           (rs.clock.root_ns(*previous) - start_ns) / 1000.0, thread));
  *previous = std::max(*previous, e.end_tick);
}

void Checker::process(std::uint32_t r, const Event& e) {
  RankState& rs = ranks_[r];
  const Site s{r, rs.reader->event_count() - 1, e.function};
  const double start_ns = rs.clock.root_ns(e.start_tick);
  const double end_ns = rs.clock.root_ns(e.end_tick);
  if (e.kind == RecordKind::comm_create) {
    record_comm(r, s, e);
    return;
  }
  if (e.kind == RecordKind::end && !e.text.empty()) {
    // The local calls' totals (format 5): the summary adds them to the time inside MPI.
    const auto j = nlohmann::json::parse(e.text, nullptr, false);
    if (j.is_object() && j.contains("local") && j["local"].is_object()) {
      for (const auto& [name, v] : j["local"].items())
        if (json_field(v, "ticks", std::int64_t{0}) < 0)
          error(s, fmt::format("the end record's local time of {} is negative", name));
    }
    return;
  }
  if (e.kind == RecordKind::function || e.kind == RecordKind::poll_run)
    check_thread_order(rs, s, e, start_ns);
  if (e.kind != RecordKind::function) return;
  if (e.has(kComm) && !rs.comms.count(e.comm)) {
    const FunctionInfo* info = find_function(e.function);
    if (info == nullptr || info->function_class != FunctionClass::opaque)
      error(s, fmt::format("uses communicator {:#x} before any comm_create record for it", e.comm));
    rs.comms.insert(e.comm);
  }
  const FunctionInfo* info = find_function(e.function);
  if (info == nullptr) {
    error(s, fmt::format("unknown function id {}", e.function));
    return;
  }
  const std::string_view p = info->pattern;
  // The replay needs MPI_Init first and MPI_Finalize (or MPI_Abort) last: a call outside them
  // is an error here, so that what the check accepts, the replay replays.
  if (p == "init" || p == "init_thread") {
    rs.initialized = true;
  } else if ((!rs.initialized || rs.finalized) && !rs.reported_order) {
    rs.reported_order = true;
    error(s, fmt::format("{} {} MPI_{}", info->name, rs.finalized ? "after" : "before",
                         rs.finalized ? "Finalize" : "Init"));
  }
  if (p == "finalize" || p == "abort") rs.finalized = true;
  using Kind = RequestState::Kind;
  auto add_request = [&](Kind kind, std::int32_t peer, std::int32_t tag, std::uint64_t bytes) {
    if (!e.has(kRequest) || e.request == 0) return;
    if (rs.requests.count(e.request))
      error(s, fmt::format("request id {} created while still active", e.request));
    rs.requests[e.request] = {kind, s, e.comm, peer, tag, bytes, start_ns};
  };
  if (p == "send") {
    post_send(s, e.comm, e.peer, e.tag, e.bytes, start_ns);
  } else if (p == "isend") {
    post_send(s, e.comm, e.peer, e.tag, e.bytes, start_ns);
    add_request(Kind::send, e.peer, e.tag, e.bytes);
  } else if (p == "recv") {
    if (e.completions.empty())
      error(s, "a blocking receive without its status (the tracer records one)");
    else
      post_recv(s, e.comm, e.completions.front(), e.bytes, e.peer, e.tag, end_ns);
  } else if (p == "irecv") {
    const std::int32_t tag = e.flag(kWildcardTag) ? -1 : e.tag;
    add_request(Kind::recv, e.peer, tag, e.bytes);
    if (e.has(kRequest) && e.request != 0)
      rs.requests[e.request].reserved = reserve_recv(r, s, e.comm, e.peer, tag);
  } else if (p == "send_init" || p == "recv_init") {
    rs.persistent[e.request] = {p == "send_init" ? Kind::send : Kind::recv, e.comm,  e.peer,
                                e.flag(kWildcardTag) ? -1 : e.tag,          e.bytes, e.function};
  } else if (p == "start") {
    if (!e.requests.empty()) start_persistent(r, s, e.requests.front(), e.request, start_ns);
  } else if (p == "startall") {
    for (std::size_t i = 0; i < e.requests.size(); ++i)
      start_persistent(r, s, e.requests[i], e.request + i, start_ns);
  } else if (p == "sendrecv" || p == "sendrecv_replace") {
    post_send(s, e.comm, e.peer, e.tag, e.bytes, start_ns);
    if (e.completions.empty())
      error(s, "a send-receive without its status (the tracer records one)");
    if (!e.completions.empty())
      post_recv(s, e.comm, e.completions.front(), e.recv_bytes, e.root,
                e.flag(kWildcardTag) ? -1 : e.completions.front().tag, end_ns);
  } else if (p == "mprobe" || p == "improbe") {
    if (!e.completions.empty() && e.completions.front().request != 0) {
      const Completion& c = e.completions.front();
      rs.messages[c.request] = {e.comm, c.source, c.tag, c.bytes};
    }
  } else if (p == "mrecv" || p == "imrecv") {
    const std::uint64_t id = e.requests.empty() ? 0 : e.requests.front();
    const auto m = rs.messages.find(id);
    if (id != 0 && m == rs.messages.end()) {
      error(s, fmt::format("receives matched message {}, which no Mprobe returned", id));
    } else if (id != 0) {
      const ProbedMessage msg = m->second;
      rs.messages.erase(m);
      if (p == "mrecv") {
        Completion c{0, -1, msg.source, msg.tag, msg.bytes, false};
        if (!e.completions.empty()) c = e.completions.front();
        post_recv(s, msg.comm, c, e.bytes, msg.source, msg.tag, end_ns);
      } else if (e.has(kRequest)) {
        rs.requests[e.request] = {Kind::recv, s, msg.comm, msg.source, msg.tag, e.bytes, start_ns};
      }
    }
  } else if (p == "request_free") {
    for (const Completion& c : e.completions)
      complete(r, s, c, end_ns);
    if (!e.requests.empty()) {
      // A freed receive that never completes holds no channel back.
      if (const auto it = rs.requests.find(e.requests.front()); it != rs.requests.end())
        rs.wildcards.erase(it->second.site.event);
      rs.requests.erase(e.requests.front());
      rs.persistent.erase(e.requests.front());
    }
    return;
  } else if (semantics_of(e.function).collective) {
    check_collective(r, s, e, p);
    add_request(Kind::collective, 0, 0, 0);
  } else if (p == "comm_idup") {
    add_request(Kind::other, 0, 0, 0);
  } else if (info->function_class == FunctionClass::opaque) {
    add_request(Kind::other, 0, 0, 0);
  }
  if (semantics_of(e.function).completes_requests) {
    for (const Completion& c : e.completions)
      complete(r, s, c, end_ns);
  }
}

void Checker::finish() {
  for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
    RankState& rs = ranks_[r];
    if (!rs.reader) continue;
    const bool truncated = rs.failed || rs.reader->end() != RankEnd::complete;
    if (!rs.failed && rs.reader->end() != RankEnd::complete)
      issue(CheckIssue::Severity::error, r, static_cast<std::int64_t>(rs.reader->event_count()),
            "truncated: the rank's data ends without an end record (the run did not reach "
            "MPI_Finalize on this rank)");
    else if (!rs.failed && !rs.finalized)
      issue(CheckIssue::Severity::error, r, static_cast<std::int64_t>(rs.reader->event_count()),
            "ends without MPI_Finalize or MPI_Abort (the replay cannot end this rank)");
    for (const auto& [id, req] : rs.requests) {
      const std::string m =
          fmt::format("request {} (created at {}) was never completed", id, where(req.site));
      if (truncated)
        warning(req.site, m + " before the data ends");
      else
        error(req.site, m);
    }
  }
  auto truncated = [&](std::int32_t r) {
    const RankState& rs = ranks_[static_cast<std::size_t>(r)];
    return rs.failed || !rs.reader || rs.reader->end() != RankEnd::complete;
  };
  // Receives that were posted but never completed (reported as such) give up their places;
  // what follows them still matches.
  std::vector<Channel> all;
  for (auto& rank : ranks_)
    rank.wildcards.clear();
  for (auto& [ch, q] : channels_) {
    std::erase_if(q.recvs, [](const RecvSlot& x) { return !x.filled; });
    all.push_back(ch);
  }
  for (const auto& ch : all)
    drain(ch);
  for (const auto& [ch, q] : channels_) {
    const auto& [comm, source, dest, tag] = ch;
    // Where a rank's data stops early, its partners' messages are expected to dangle.
    const bool expected = truncated(source) || truncated(dest);
    for (const auto& send : q.sends) {
      const std::string m = fmt::format(
          "send to rank {} (tag {}, communicator {:#x}) was never "
          "received",
          dest, tag, comm);
      expected ? warning(send.site, m) : error(send.site, m);
    }
    for (const auto& [posted_event, filled, recv] : q.recvs) {
      const std::string m = fmt::format(
          "receive from rank {} (tag {}, communicator {:#x}) "
          "matched no send",
          source, tag, comm);
      expected ? warning(recv.site, m) : error(recv.site, m);
    }
  }
  bool any_truncated = false;
  for (std::uint32_t r = 0; r < ranks_.size(); ++r)
    any_truncated = any_truncated || truncated(static_cast<std::int32_t>(r));
  for (const auto& [key, c] : collectives_) {
    const std::uint64_t n = participants(key.first);
    issue(any_truncated ? CheckIssue::Severity::warning : CheckIssue::Severity::error, c.first.rank,
          static_cast<std::int64_t>(c.first.event),
          fmt::format("collective #{} on communicator {:#x} ({}) was called by {} of "
                      "{} members",
                      key.second, key.first, function_name(c.function), c.seen, n));
  }
}

}  // namespace

CheckResult check_trace(const TraceReader& trace, std::size_t max_issues) {
  Checker checker(trace, max_issues);
  return checker.run();
}

std::string check_report(const CheckResult& r, std::uint32_t ranks) {
  std::string out;
  for (const auto& i : r.issues) {
    std::string place = i.rank >= 0 ? fmt::format("rank {}", i.rank) : "trace";
    if (i.event >= 0) place += fmt::format(" event {}", i.event);
    out += fmt::format("{}: {}: {}\n", place,
                       i.severity == CheckIssue::Severity::error ? "error" : "warning", i.message);
  }
  if (r.errors + r.warnings > r.issues.size())
    out += fmt::format("... and {} more\n", r.errors + r.warnings - r.issues.size());
  out += fmt::format(
      "trace-check: {} ranks, {} events, {} messages matched, {} requests completed, {} "
      "collective calls checked, {} communicators: {} ({} errors, {} warnings)\n",
      ranks, r.events, r.messages_matched, r.requests_completed, r.collectives_checked,
      r.communicators, r.ok() ? "OK" : "FAILED", r.errors, r.warnings);
  return out;
}

}  // namespace commgauge::trace
