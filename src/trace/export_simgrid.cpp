#include "trace/export_simgrid.hpp"
#include "trace/call_semantics.hpp"
#include "trace/json_fields.hpp"

#include <algorithm>
#include <deque>
#include <memory>
#include <ostream>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "collectives/intercomm.hpp"
#include "common/text_file.hpp"

#include "trace/function_ids.hpp"
#include "trace/functions.hpp"

namespace commgauge::trace {

namespace {

namespace fs = std::filesystem;
using collectives::Operation;

/// A channel's key besides its endpoints: (communicator, MPI tag), or a lowered collective's
/// (communicator, -1 - sequence number).
struct Key {
  std::uint64_t comm = 0;
  std::int64_t tag = 0;
  bool operator<(const Key& o) const { return comm != o.comm ? comm < o.comm : tag < o.tag; }
};

std::uint32_t key_hash(const Key& k) {
  std::uint64_t z = k.comm * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(k.tag);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return static_cast<std::uint32_t>((z ^ (z >> 31)) % 65521);
}

/// The exported tag: the message's number in its channel (15 bits) and the channel key's hash.
std::int32_t exported_tag(const Key& k, std::uint64_t number) {
  return static_cast<std::int32_t>(((number & 0x7FFF) << 16) | key_hash(k));
}

/// One line waiting to be written: p2p lines get their exported tag when they reach the head
/// of the queue (receives number in posting order, which a wildcard resolves only later).
struct Item {
  enum class Kind { text, send, isend, recv, irecv, wait } kind = Kind::text;
  std::string text;
  std::int32_t peer = -1;  ///< send: destination; recv: source (once resolved)
  Key key;
  std::uint64_t bytes = 0;
  std::uint64_t request = 0;  ///< isend/irecv: the request it creates; wait: the one it waits
  bool resolved = true;       ///< irecv: its source and tag are known
  bool dropped = false;       ///< a cancelled receive and its waits

  static Item line(std::string text) {
    Item i;
    i.text = std::move(text);
    return i;
  }
  static Item message(Kind kind, std::int32_t peer, Key key, std::uint64_t bytes,
                      std::uint64_t request = 0, bool resolved = true) {
    Item i;
    i.kind = kind;
    i.peer = peer;
    i.key = key;
    i.bytes = bytes;
    i.request = request;
    i.resolved = resolved;
    return i;
  }
  static Item wait_for(std::uint64_t request) {
    Item i;
    i.kind = Kind::wait;
    i.request = request;
    return i;
  }
};

/// What a live request stands for in the export.
struct ExportRequest {
  enum class Kind { p2p_send, p2p_recv, collective, none } kind = Kind::none;
  Item* item = nullptr;                      ///< the irecv item, until it is written
  std::int32_t src = -1, dst = -1, tag = 0;  ///< its wait key once written
  bool written = false;
  bool dropped = false;
  Event collective;  ///< a nonblocking collective, replayed at its completion
};

struct PersistentRequest {
  bool send = true;
  std::int32_t peer = 0;
  std::int32_t tag = 0;
  std::uint64_t comm = 0;
  std::uint64_t bytes = 0;
};

class RankExporter {
 public:
  RankExporter(const TraceReader& trace, std::uint32_t rank, const SimgridExportOptions& options,
               std::ostream& out, SimgridExportResult& result)
      : trace_(trace), rank_(rank), options_(options), out_(out), result_(result) {}

  void run();

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw TraceError(fmt::format("rank {} event {}: cannot export to SimGrid: {}", rank_,
                                 reader_ ? reader_->event_count() - 1 : 0, message));
  }
  void note(const std::string& n) {
    if (std::find(result_.notes.begin(), result_.notes.end(), n) == result_.notes.end())
      result_.notes.push_back(n);
  }
  void text(std::string line) {
    queue_.push_back(Item::line(std::move(line)));
    flush();
  }
  Item& push(Item item) {
    if (item.kind != Item::Kind::text && item.kind != Item::Kind::wait && item.resolved)
      check_peer(item.peer);
    queue_.push_back(std::move(item));
    return queue_.back();
  }
  // A trace read with --no-check may name a rank it does not have (simulate refuses it too).
  void check_peer(std::int32_t peer) const {
    if (peer < 0 || static_cast<std::uint32_t>(peer) >= trace_.ranks())
      fail(fmt::format("peer {} is not a rank of this {}-rank trace", peer, trace_.ranks()));
  }
  void flush();
  std::string render(Item& item);
  void compute(std::int64_t ticks);
  void process(const Event& e);
  void complete(const Completion& c);
  void collective(const Event& e);
  void lowered(const Event& e, const collectives::Collective& c, Operation op);
  void emit_steps(std::uint64_t comm, const std::vector<collectives::Step>& steps);
  collectives::Algorithm algorithm_for(Operation op) const;
  collectives::Collective view(const Event& e, Operation op) const;
  const std::vector<std::int32_t>& members(std::uint64_t comm) const;

  const TraceReader& trace_;
  std::uint32_t rank_;
  const SimgridExportOptions& options_;
  std::ostream& out_;
  SimgridExportResult& result_;
  std::unique_ptr<RankReader> reader_;
  ClockMap clock_;
  double overhead_ticks_ = 0;
  std::deque<Item> queue_;
  std::unordered_map<std::uint64_t, ExportRequest> requests_;
  std::unordered_map<std::uint64_t, PersistentRequest> persistent_;
  std::unordered_map<std::uint64_t, std::pair<std::int32_t, std::int32_t>> messages_;
  std::map<std::pair<std::int32_t, Key>, std::uint64_t> sent_, received_;
  std::map<std::uint64_t, std::vector<std::int32_t>> comms_;
  std::map<std::uint64_t, std::vector<std::int32_t>> remote_groups_;
  std::map<std::uint64_t, std::uint64_t> collective_sequence_;
  std::int64_t last_end_ = 0;
  bool started_ = false;
  bool finalized_ = false;
};

void RankExporter::flush() {
  while (!queue_.empty()) {
    Item& head = queue_.front();
    if (!head.resolved && !head.dropped) return;
    if (!head.dropped) {
      out_ << rank_ << ' ' << render(head) << '\n';
      ++result_.actions;
    }
    if (head.request != 0 && (head.kind == Item::Kind::irecv || head.kind == Item::Kind::isend)) {
      auto it = requests_.find(head.request);
      if (it != requests_.end()) it->second.item = nullptr;
    }
    queue_.pop_front();
  }
}

std::string RankExporter::render(Item& item) {
  switch (item.kind) {
    case Item::Kind::text:
      return item.text;
    case Item::Kind::send:
    case Item::Kind::isend: {
      const std::int32_t tag = exported_tag(item.key, sent_[{item.peer, item.key}]++);
      ++result_.messages;
      if (item.kind == Item::Kind::isend) {
        auto& r = requests_[item.request];
        r.src = static_cast<std::int32_t>(rank_);
        r.dst = item.peer;
        r.tag = tag;
        r.written = true;
      }
      return fmt::format("{} {} {} {}", item.kind == Item::Kind::send ? "send" : "isend", item.peer,
                         tag, item.bytes);
    }
    case Item::Kind::recv:
    case Item::Kind::irecv: {
      const std::int32_t tag = exported_tag(item.key, received_[{item.peer, item.key}]++);
      if (item.kind == Item::Kind::irecv) {
        auto& r = requests_[item.request];
        r.src = item.peer;
        r.dst = static_cast<std::int32_t>(rank_);
        r.tag = tag;
        r.written = true;
      }
      return fmt::format("{} {} {} {}", item.kind == Item::Kind::recv ? "recv" : "irecv", item.peer,
                         tag, item.bytes);
    }
    case Item::Kind::wait: {
      const auto it = requests_.find(item.request);
      if (it == requests_.end() || !it->second.written) fail("a wait before its request");
      const ExportRequest r = it->second;
      requests_.erase(it);
      return fmt::format("wait {} {} {}", r.src, r.dst, r.tag);
    }
  }
  return "";
}

void RankExporter::compute(std::int64_t ticks) {
  const double seconds = clock_.duration_ns(ticks) * 1e-9;
  if (seconds <= 0) return;
  result_.compute_seconds += seconds;
  text(fmt::format("compute {:.0f}", seconds * options_.host_speed_flops));
}

const std::vector<std::int32_t>& RankExporter::members(std::uint64_t comm) const {
  const auto it = comms_.find(comm);
  if (it == comms_.end()) fail(fmt::format("communicator {:#x} used before its creation", comm));
  return it->second;
}

collectives::Collective RankExporter::view(const Event& e, Operation op) const {
  collectives::Collective c;
  c.op = op;
  c.members = members(e.comm);
  const auto me = std::find(c.members.begin(), c.members.end(), static_cast<std::int32_t>(rank_));
  if (me == c.members.end()) fail("this rank is not a member of the collective's communicator");
  c.me = static_cast<std::size_t>(me - c.members.begin());
  // A root on an operation without one is ignored, as the replay and trace-check ignore it.
  if (e.has(kRoot) && e.root >= 0 && collectives::rooted(op)) {
    const auto root = std::find(c.members.begin(), c.members.end(), e.root);
    if (root == c.members.end()) fail("the collective's root is not a member");
    c.root = static_cast<std::size_t>(root - c.members.begin());
  }
  const bool at_root = c.me == c.root;
  c.bytes = e.bytes;
  switch (op) {
    case Operation::reduce_scatter:
      c.counts = e.recv_counts;
      break;
    case Operation::gather:
      if (at_root) c.bytes = e.recv_bytes;
      break;
    case Operation::gatherv:
      if (at_root) c.counts = e.recv_counts;
      break;
    case Operation::scatter:
      if (!at_root) c.bytes = e.recv_bytes;
      break;
    case Operation::scatterv:
      if (at_root)
        c.counts = e.counts;
      else
        c.bytes = e.recv_bytes;
      break;
    case Operation::allgatherv:
      c.counts = e.recv_counts;
      break;
    case Operation::alltoallv:
    case Operation::alltoallw:
      c.counts = e.counts;
      c.recv_counts = e.recv_counts;
      break;
    default:
      break;
  }
  return c;
}

collectives::Algorithm RankExporter::algorithm_for(Operation op) const {
  return options_.algorithms.count(op) ? options_.algorithms.at(op)
                                       : collectives::algorithms_for(op).front();
}

void RankExporter::lowered(const Event& e, const collectives::Collective& c, Operation op) {
  std::vector<collectives::Step> steps;
  try {
    steps = collectives::schedule(c, algorithm_for(op));
  } catch (const std::invalid_argument& error) {
    fail(error.what());
  }
  emit_steps(e.comm, steps);
}

void RankExporter::emit_steps(std::uint64_t comm, const std::vector<collectives::Step>& steps) {
  const Key key{comm, -1 - static_cast<std::int64_t>(collective_sequence_[comm]++)};
  // Each step: post the receive, post the send, complete both (the rule the schedules obey).
  std::uint64_t next_request = 1ULL << 62;
  for (const auto& s : steps) {
    std::uint64_t recv_request = 0, send_request = 0;
    if (s.recv_from >= 0) {
      recv_request = next_request++;
      requests_[recv_request].kind = ExportRequest::Kind::p2p_recv;
      push(Item::message(Item::Kind::irecv, s.recv_from, key, s.recv_bytes, recv_request));
    }
    if (s.send_to >= 0) {
      send_request = next_request++;
      requests_[send_request].kind = ExportRequest::Kind::p2p_send;
      push(Item::message(Item::Kind::isend, s.send_to, key, s.send_bytes, send_request));
    }
    if (recv_request != 0) push(Item::wait_for(recv_request));
    if (send_request != 0) push(Item::wait_for(send_request));
  }
  flush();
  ++result_.lowered_collectives;
}

void RankExporter::collective(const Event& e) {
  const FunctionInfo* info = find_function(e.function);
  const std::string_view p = info->pattern;
  const auto op = collectives::parse_operation(p);
  if (!op) fail(fmt::format("no collective operation for {}", info->name));
  if (e.comm == 1) return;  // MPI_COMM_SELF: nothing crosses the network
  if (e.flag(kIntercomm)) {
    // As the simulator replays it (collectives/intercomm.hpp): Open MPI's coll/inter parts, the
    // collectives inside the caller's group lowered with the intracommunicator algorithms.
    const auto all = comms_.find(e.comm);
    const auto remote = remote_groups_.find(e.comm);
    if (all == comms_.end() || remote == remote_groups_.end())
      fail("an intercommunicator without its groups");
    collectives::InterCollective ic;
    ic.op = *op;
    ic.local.assign(all->second.begin(),
                    all->second.end() - static_cast<std::ptrdiff_t>(remote->second.size()));
    ic.remote = remote->second;
    const auto me = std::find(ic.local.begin(), ic.local.end(), static_cast<std::int32_t>(rank_));
    if (me == ic.local.end()) fail("this rank is not in its intercommunicator's local group");
    ic.me = static_cast<std::size_t>(me - ic.local.begin());
    ic.role = inter_role(e.root);
    ic.root_world = e.root;
    ic.bytes = e.bytes;
    std::vector<collectives::Step> steps;
    try {
      if (!e.counts.empty() || !e.recv_counts.empty())
        throw std::invalid_argument("per-member counts are not implemented on intercommunicators");
      for (const auto& part : collectives::intercomm_parts(ic)) {
        if (!part.local) {
          steps.insert(steps.end(), part.steps.begin(), part.steps.end());
          continue;
        }
        collectives::Collective local;
        local.op = part.op;
        local.members = ic.local;
        local.me = ic.me;
        local.bytes = part.bytes;
        const auto s = collectives::schedule(local, algorithm_for(part.op));
        steps.insert(steps.end(), s.begin(), s.end());
      }
    } catch (const std::invalid_argument& error) {
      fail(fmt::format("{} on an intercommunicator: {}", info->name, error.what()));
    }
    emit_steps(e.comm, steps);
    note(
        "intercommunicator collectives are lowered to point-to-point as Open MPI's coll/inter "
        "runs them (a collective inside each group, one message between the groups)");
    return;
  }
  const bool world = e.comm == 0;
  const collectives::Collective c = view(e, *op);
  if (world) {
    // The replayer's own actions; sizes in bytes, computation 0.
    std::string line;
    auto join = [](const std::vector<std::uint64_t>& v) {
      std::string s;
      for (auto x : v)
        s += fmt::format(" {}", x);
      return s;
    };
    const std::uint64_t n = c.members.size();
    switch (*op) {
      case Operation::barrier:
        line = "barrier";
        break;
      case Operation::bcast:
        line = fmt::format("bcast {} {}", e.bytes, c.root);
        break;
      case Operation::reduce:
        line = fmt::format("reduce {} 0 {}", e.bytes, c.root);
        break;
      case Operation::allreduce:
        line = fmt::format("allreduce {} 0", e.bytes);
        break;
      case Operation::alltoall:
        line = fmt::format("alltoall {} {}", e.bytes, e.recv_bytes != 0 ? e.recv_bytes : e.bytes);
        break;
      case Operation::alltoallv: {
        std::uint64_t send_total = 0, recv_total = 0;
        for (auto x : e.counts)
          send_total += x;
        for (auto x : e.recv_counts)
          recv_total += x;
        line = fmt::format("alltoallv {}{} {}{}", send_total, join(e.counts), recv_total,
                           join(e.recv_counts));
        break;
      }
      case Operation::gather:
        line = fmt::format("gather {} {} {}", e.bytes, c.me == c.root ? e.recv_bytes : e.bytes,
                           c.root);
        break;
      case Operation::allgather:
        line = fmt::format("allgather {} {}", e.bytes, e.recv_bytes);
        break;
      case Operation::gatherv:
        if (c.me == c.root)
          line = fmt::format("gatherv {}{} {}", e.bytes, join(e.recv_counts), c.root);
        else  // non-roots do not know the counts; the replayer reads them but uses the root's
          line = fmt::format("gatherv {}{} {}", e.bytes,
                             join(std::vector<std::uint64_t>(n, e.bytes)), c.root);
        break;
      case Operation::allgatherv:
        line = fmt::format("allgatherv {}{}", e.bytes, join(e.recv_counts));
        break;
      case Operation::scatter:
        line = fmt::format("scatter {} {} {}", c.me == c.root ? e.bytes : e.recv_bytes,
                           c.me == c.root ? e.bytes : e.recv_bytes, c.root);
        break;
      case Operation::scatterv:
        if (c.me == c.root)
          line = fmt::format("scatterv{} {} {}", join(e.counts), e.recv_bytes, c.root);
        else
          line = fmt::format("scatterv{} {} {}", join(std::vector<std::uint64_t>(n, e.recv_bytes)),
                             e.recv_bytes, c.root);
        break;
      case Operation::reduce_scatter:
        line = fmt::format("reducescatter{} 0", join(e.recv_counts));
        break;
      default:
        break;  // scan, exscan, reduce_scatter_block, alltoallw: lowered below
    }
    if (!line.empty()) {
      text(line);
      ++result_.world_collectives;
      return;
    }
  }
  lowered(e, c, *op);
}

void RankExporter::complete(const Completion& done) {
  if (done.request == 0) return;
  const auto it = requests_.find(done.request);
  if (it == requests_.end()) return;  // an opaque call's request, or comm_idup
  ExportRequest& r = it->second;
  switch (r.kind) {
    case ExportRequest::Kind::p2p_recv:
      if (r.item != nullptr) {
        if (done.cancelled || done.source == kProcNull) {
          r.item->dropped = true;
          requests_.erase(it);
          flush();
          return;
        }
        check_peer(done.source);
        r.item->peer = done.source;
        r.item->key.tag = done.tag;
        r.item->bytes = done.bytes;
        r.item->resolved = true;
      }
      push(Item::wait_for(done.request));
      flush();
      return;
    case ExportRequest::Kind::p2p_send:
      push(Item::wait_for(done.request));
      flush();
      return;
    case ExportRequest::Kind::collective: {
      const Event e = r.collective;
      requests_.erase(it);
      collective(e);
      return;
    }
    case ExportRequest::Kind::none:
      requests_.erase(it);
      return;
  }
}

void RankExporter::process(const Event& e) {
  if (e.kind == RecordKind::comm_create) {
    comms_[e.comm] = e.members;
    if (e.remote_size > 0)  // an intercommunicator: local group first, then the remote one
      remote_groups_[e.comm].assign(e.members.end() - e.remote_size, e.members.end());
    return;
  }
  if (e.kind == RecordKind::poll_run) {
    compute(e.start_tick - last_end_ - (e.has(kLocal) ? e.local_ticks : 0));
    // The failed polls themselves: what is not inside MPI is computation.
    compute(e.end_tick - e.start_tick - e.in_mpi_ticks);
    last_end_ = e.end_tick;
    return;
  }
  if (e.kind != RecordKind::function) return;
  const FunctionInfo* info = find_function(e.function);
  if (info == nullptr) fail(fmt::format("unknown function id {}", e.function));
  if (e.function == fn::Init || e.function == fn::Init_thread) {
    text("init");
    started_ = true;
    last_end_ = e.end_tick;
    return;
  }
  if (!started_) fail("an MPI call before MPI_Init");
  compute(e.start_tick - last_end_ - (e.has(kLocal) ? e.local_ticks : 0) - e.fresh_look_ticks -
          static_cast<std::int64_t>(overhead_ticks_));
  last_end_ = e.end_tick;
  if (e.function == fn::Finalize) {
    text("finalize");
    finalized_ = true;
    return;
  }
  if (info->function_class == FunctionClass::opaque) {
    // A request an unmodeled call creates (MPI_File_iwrite...) completes with nothing to replay.
    if (e.has(kRequest) && e.request != 0) {
      ExportRequest& r = requests_[e.request];
      r = ExportRequest{};
      r.kind = ExportRequest::Kind::none;
    }
    compute(e.end_tick - e.start_tick);
    note("unmodeled MPI calls are replayed as computation of their recorded duration");
    return;
  }
  const std::string_view p = info->pattern;
  const Key key{e.comm, e.tag};
  using K = ExportRequest::Kind;
  auto new_request = [&](K kind) -> ExportRequest& {
    ExportRequest& r = requests_[e.request];
    r = ExportRequest{};
    r.kind = kind;
    return r;
  };
  if (p == "send") {
    if (e.peer != kProcNull) push(Item::message(Item::Kind::send, e.peer, key, e.bytes));
  } else if (p == "isend") {
    if (e.peer != kProcNull) {
      new_request(K::p2p_send);
      push(Item::message(Item::Kind::isend, e.peer, key, e.bytes, e.request));
    } else {
      new_request(K::none);
    }
  } else if (p == "recv") {
    if (e.completions.empty()) fail("a blocking receive without its status");
    const Completion& c = e.completions.front();
    if (c.source != kProcNull)
      push(Item::message(Item::Kind::recv, c.source, Key{e.comm, c.tag}, c.bytes));
  } else if (p == "irecv") {
    ExportRequest& r = new_request(K::p2p_recv);
    Item& item = push(Item::message(Item::Kind::irecv, e.peer, key, e.bytes, e.request, false));
    r.item = &item;
  } else if (p == "send_init" || p == "recv_init") {
    persistent_[e.request] = {p == "send_init", e.peer, e.tag, e.comm, e.bytes};
  } else if (p == "start" || p == "startall") {
    for (std::size_t i = 0; i < e.requests.size(); ++i) {
      const auto it = persistent_.find(e.requests[i]);
      if (it == persistent_.end()) fail("Start of an unknown persistent request");
      const PersistentRequest& pr = it->second;
      const std::uint64_t id = e.request + i;
      ExportRequest& r = requests_[id];
      r = ExportRequest{};
      if (pr.peer == kProcNull) {
        r.kind = K::none;
      } else if (pr.send) {
        r.kind = K::p2p_send;
        push(Item::message(Item::Kind::isend, pr.peer, Key{pr.comm, pr.tag}, pr.bytes, id));
      } else {
        r.kind = K::p2p_recv;
        Item& item = push(
            Item::message(Item::Kind::irecv, pr.peer, Key{pr.comm, pr.tag}, pr.bytes, id, false));
        r.item = &item;
      }
    }
  } else if (p == "sendrecv" || p == "sendrecv_replace") {
    if (e.completions.empty()) fail("a send-receive without its status");
    const Completion& c = e.completions.front();
    const std::uint64_t id = (1ULL << 63) | (reader_->event_count() - 1);
    if (c.source != kProcNull) {
      requests_[id].kind = K::p2p_recv;
      push(Item::message(Item::Kind::irecv, c.source, Key{e.comm, c.tag}, c.bytes, id));
    }
    if (e.peer != kProcNull) push(Item::message(Item::Kind::send, e.peer, key, e.bytes));
    if (c.source != kProcNull) push(Item::wait_for(id));
  } else if (p == "mprobe" || p == "improbe") {
    if (!e.completions.empty() && e.completions.front().request != 0)
      messages_[e.completions.front().request] = {e.completions.front().source,
                                                  e.completions.front().tag};
  } else if (p == "mrecv" || p == "imrecv") {
    const auto it = e.requests.empty() ? messages_.end() : messages_.find(e.requests.front());
    if (it == messages_.end()) fail("Mrecv of a message no Mprobe returned");
    const auto [source, tag] = it->second;
    messages_.erase(it);
    if (p == "mrecv") {
      const std::uint64_t bytes = e.completions.empty() ? e.bytes : e.completions.front().bytes;
      push(Item::message(Item::Kind::recv, source, Key{e.comm, tag}, bytes));
    } else {
      requests_[e.request].kind = K::p2p_recv;
      push(Item::message(Item::Kind::irecv, source, Key{e.comm, tag}, e.bytes, e.request));
    }
  } else if (semantics_of(e.function).collective) {
    if (e.has(kRequest)) {  // nonblocking: replayed where it completes
      ExportRequest& r = new_request(K::collective);
      r.collective = e;
      note("nonblocking collectives are replayed, blocking, where the trace completes them");
    } else {
      collective(e);
    }
  } else if (p == "comm_idup" && e.has(kRequest) && e.request != 0) {
    new_request(K::none);  // its completion carries nothing to replay
  }
  // Completions (the Wait/Test family, Request_free of an active request).
  if (semantics_of(e.function).completes_requests)
    for (const Completion& c : e.completions)
      complete(c);
  flush();
}

void RankExporter::run() {
  reader_ = std::make_unique<RankReader>(trace_.open_rank(rank_));
  clock_ = clock_map(trace_, *reader_);
  if (reader_->header().contains("tracer"))
    overhead_ticks_ =
        json_field(json_object(reader_->header(), "tracer"), "overhead_ticks_per_event", 0.0);
  comms_[0].resize(trace_.ranks());
  for (std::uint32_t r = 0; r < trace_.ranks(); ++r)
    comms_[0][r] = static_cast<std::int32_t>(r);
  Event e;
  while (reader_->next(e))
    process(e);
  if (reader_->end() != RankEnd::complete)
    throw TraceError(
        fmt::format("rank {} is truncated (the run did not finish): a replay needs "
                    "every rank's complete trace",
                    rank_));
  for (const auto& [id, r] : requests_)
    if (r.kind == ExportRequest::Kind::p2p_recv && r.item != nullptr && !r.item->resolved)
      fail(fmt::format("request {} was never completed", id));
  if (!finalized_) text("finalize");
  flush();
  if (!queue_.empty()) fail("unresolved receives at the end of the trace");
}

std::string size_text(double bytes_per_s) {
  return fmt::format("{:.0f}Bps", bytes_per_s);
}

}  // namespace

namespace {

// Hosts as the trace placed the ranks (index.json's "placement", checked by the reader when it
// opened the trace: one host number per rank, into "hosts"); one host per rank without it.
std::vector<std::size_t> placement_of(const TraceReader& trace) {
  std::vector<std::size_t> placement(trace.ranks());
  const auto& index = trace.index();
  if (index.contains("placement") && index["placement"].is_array() &&
      index["placement"].size() == trace.ranks()) {
    for (std::uint32_t r = 0; r < trace.ranks(); ++r)
      placement[r] = index["placement"][r].get<std::size_t>();
  } else {
    for (std::uint32_t r = 0; r < trace.ranks(); ++r)
      placement[r] = r;
  }
  return placement;
}

}  // namespace

SimgridExportResult export_simgrid_ti(const TraceReader& trace, const fs::path& out,
                                      const SimgridExportOptions& options) {
  if (trace.ranks() == 0) throw TraceError("the trace has no ranks");
  if (!trace.missing_ranks().empty())
    throw TraceError(fmt::format("rank {} is missing from the trace", trace.missing_ranks()[0]));
  const std::vector<std::size_t> placement = placement_of(trace);
  std::error_code ec;
  NewDirectory directory(out);  // gone again if the export fails (destroyed after `files`)
  // Every file is an AtomicFile, finished (synced and closed) when complete and published
  // only when all are: a failure leaves the directory as it was (a user's earlier export
  // included) and no temporary behind. Finished files hold no descriptor or buffer, so a trace
  // of 32 K ranks does not keep 32 K files open.
  std::vector<std::unique_ptr<AtomicFile>> files;
  auto finished = [&files](std::unique_ptr<AtomicFile> file) {
    file->finish();
    files.push_back(std::move(file));
  };
  std::vector<fs::path> published;
  try {
    SimgridExportResult result;
    result.ranks = trace.ranks();
    std::string list;
    for (std::uint32_t r = 0; r < trace.ranks(); ++r) {
      auto actions = std::make_unique<AtomicFile>(out / fmt::format("rank-{}.txt", r));
      RankExporter(trace, r, options, actions->stream(), result).run();
      list += fs::absolute(actions->target()).string() + '\n';
      finished(std::move(actions));
    }
    auto list_file = std::make_unique<AtomicFile>(out / "trace.txt");
    list_file->write(list);
    finished(std::move(list_file));
    std::size_t hosts = 0;
    for (auto h : placement)
      hosts = std::max(hosts, h + 1);
    std::vector<std::size_t> per_host(hosts, 0);
    for (auto h : placement)
      ++per_host[h];
    const std::size_t cores = *std::max_element(per_host.begin(), per_host.end());
    result.hosts = hosts;
    auto platform = std::make_unique<AtomicFile>(out / "platform.xml");
    platform->stream()
        << "<?xml version='1.0'?>\n"
           "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
           // No "--" inside: XML forbids it in a comment (xmllint refused the flag's name).
           "<!-- Written by commgauge trace-export: the traced hosts, each with the cores its "
           "ranks used; speed in flops per second as given for the export. -->\n"
           "<platform version=\"4.1\">\n"
        << fmt::format(
               "  <cluster id=\"commgauge\" prefix=\"host-\" suffix=\"\" radical=\"0-{}\" "
               "speed=\"{:.0f}f\" core=\"{}\" bw=\"{}\" lat=\"{:g}s\"/>\n",
               hosts - 1, options.host_speed_flops, cores, size_text(options.bandwidth_bytes_per_s),
               options.latency_s)
        << "</platform>\n";
    finished(std::move(platform));
    auto hostfile = std::make_unique<AtomicFile>(out / "hostfile.txt");
    for (std::uint32_t r = 0; r < trace.ranks(); ++r)
      hostfile->stream() << "host-" << placement[r] << '\n';
    finished(std::move(hostfile));
    for (auto& file : files) {
      file->publish();
      published.push_back(file->target());
    }
    sync_directory_of(out / "hostfile.txt");
    sync_directory_of(out);  // its entry in the parent, where the export created it
    directory.keep();
    return result;
  } catch (...) {
    // Only a rename or the directory's sync can fail here: what it had already published goes.
    for (const auto& file : published)
      fs::remove(file, ec);
    throw;
  }
}

}  // namespace commgauge::trace
