// The per-pattern recorders (what each event holds is specified in docs/trace-format.md).

#include "tracer/hooks.hpp"

#include <algorithm>

#include "trace/function_ids.hpp"
#include "tracer/recorder.hpp"

namespace commgauge::tracer::hooks {

namespace {

using trace::Field;

Recorder& rec() {
  return recorder();
}

std::uint64_t bytes_of(int count, MPI_Datatype type) {
  if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
  int size = 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0) return 0;
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

/// Ranks a collective's per-peer arrays cover: the remote group of an intercommunicator.
int peer_count(const CommInfo& c) {
  if (c.inter) return static_cast<int>(c.remote.size());
  return c.id == 0 ? rec().size() : static_cast<int>(c.local.size());
}

/// Peer, tag and communicator of a point-to-point call, with the wildcard flags.
void set_p2p(Event& e, const CommInfo& c, int peer, int tag) {
  e.fields |= trace::kPeer | trace::kTag | trace::kComm;
  e.peer = Recorder::world_rank(c, peer, c.inter);
  e.tag = tag;
  e.comm = c.id;
  if (peer == MPI_ANY_SOURCE) e.flags |= trace::kWildcardSource;
  if (tag == MPI_ANY_TAG) e.flags |= trace::kWildcardTag;
  if (c.inter) e.flags |= trace::kIntercomm;
}

void set_bytes(Event& e, int count, MPI_Datatype type) {
  e.fields |= trace::kBytes | trace::kCount;
  e.bytes = bytes_of(count, type);
  e.count = count > 0 ? static_cast<std::uint64_t>(count) : 0;
}

/// A send's Event::send_page_offset_bytes, where it sends from the buffer it was given: a
/// buffered send sends from the attached buffer (a copy), MPI_Sendrecv_replace from a packed
/// copy of its own (Open MPI and MPICH alike), whose starts nobody records.
void set_send_start(Event& e, const void* buf, int count, MPI_Datatype type) {
  if (e.function == trace::fn::Bsend || e.function == trace::fn::Ibsend ||
      e.function == trace::fn::Bsend_init || e.function == trace::fn::Sendrecv_replace)
    return;
  if (const auto offset = send_page_offset_bytes(buf, count, type)) {
    e.fields |= trace::kSendPageOffset;
    e.send_page_offset_bytes = *offset;
  }
}

/// A receive's Event::fresh_bytes and the look's ticks, where the tracer looked.
void set_fresh(Event& e, FreshLook fresh) {
  if (fresh.bytes == 0 && fresh.ticks == 0) return;
  e.fields |= trace::kFreshBytes;
  e.fresh_bytes = fresh.bytes;
  e.fresh_look_ticks = fresh.ticks;
}

/// The length of the request array a completing call was given.
void set_array_length(Event& e, int n) {
  e.fields |= trace::kCount;
  e.count = n > 0 ? static_cast<std::uint64_t>(n) : 0;
}

void add_completion(Event& e, const Completion& c) {
  e.fields |= trace::kCompletions;
  e.completions.push_back(c);
}

void set_collective(Event& e, const CommInfo& c, MPI_Request* request) {
  e.fields |= trace::kComm;
  e.comm = c.id;
  if (c.inter) e.flags |= trace::kIntercomm;
  if (request != nullptr) {
    e.fields |= trace::kRequest;
    e.request = rec().add_request(*request, RequestKind::collective, false, &c, 0);
  }
}

void set_root(Event& e, const CommInfo& c, int root) {
  e.fields |= trace::kRoot;
  e.root = Recorder::world_rank(c, root, c.inter);
}

/// Is this rank the root of a rooted collective?
bool is_root(const CommInfo& c, int root) {
  if (c.inter) return root == MPI_ROOT;
  return Recorder::world_rank(c, root) == rec().rank();
}

void set_reduction(Event& e, MPI_Op op, const void* sendbuf) {
  int commutative = 1;
  if (op != MPI_OP_NULL) PMPI_Op_commutative(op, &commutative);
  if (commutative) e.flags |= trace::kCommutative;
  if (sendbuf == MPI_IN_PLACE) e.flags |= trace::kInPlace;
}

void per_peer(std::vector<std::uint64_t>& out, Event& e, Field field, const int counts[],
              MPI_Datatype type, int n) {
  e.fields |= field;
  int size = 0;
  if (type != MPI_DATATYPE_NULL) PMPI_Type_size(type, &size);
  out.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    out[static_cast<std::size_t>(i)] =
        counts[i] > 0 ? static_cast<std::uint64_t>(counts[i]) * static_cast<std::uint64_t>(size)
                      : 0;
}

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
  std::uint64_t s = 0;
  for (std::uint64_t x : v)
    s += x;
  return s;
}

/// The id seed of a call collective over all of `parent`: its id and creation count.
std::uint64_t parent_seed(CommInfo& parent) {
  const std::uint64_t n = parent.children++;
  return parent.id * 0x9E3779B97F4A7C15ULL + n + 1;
}

void creation(Call& c, CommInfo& parent, std::uint64_t seed, MPI_Comm* newcomm,
              MPI_Request* request = nullptr) {
  Event& e = rec().event(c);
  e.fields |= trace::kComm | trace::kNewComm;
  e.comm = parent.id;
  const MPI_Comm created = (c.rc() == MPI_SUCCESS && newcomm != nullptr) ? *newcomm : MPI_COMM_NULL;
  e.new_comm = rec().created(created, seed, c.end());
  if (e.new_comm == 0) e.flags |= trace::kCommNull;
  if (request != nullptr) {
    e.fields |= trace::kRequest;
    e.request = rec().add_request(*request, RequestKind::comm_idup, false, &parent, 0);
  }
  rec().emit();
}

void parent_creation(Call& c, MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request = nullptr) {
  auto guard = rec().lock();
  CommInfo& parent = rec().comm(comm);
  creation(c, parent, parent_seed(parent), newcomm, request);
}

std::uint64_t keyed(std::uint64_t seed) {
  return seed * 0x9E3779B97F4A7C15ULL + rec().keyed_counter(seed);
}

std::uint64_t hash_ranks(std::vector<std::int32_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::uint64_t h = ranks.size();
  for (std::int32_t r : ranks)
    h = h * 0x100000001B3ULL ^ static_cast<std::uint64_t>(r);
  return h;
}

}  // namespace

// ---- point to point ----

void send(Call& c, const void* buf, int count, MPI_Datatype type, int dest, int tag,
          MPI_Comm comm) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  set_p2p(e, rec().comm(comm), dest, tag);
  set_bytes(e, count, type);
  set_send_start(e, buf, count, type);
  rec().emit();
}

void isend(Call& c, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
           MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_p2p(e, ci, dest, tag);
  set_bytes(e, count, type);
  set_send_start(e, buf, count, type);
  e.fields |= trace::kRequest;
  e.request = rec().add_request(*request, RequestKind::send, false, &ci, 0);
  rec().emit();
}

void send_init(Call& c, const void* buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_p2p(e, ci, dest, tag);
  set_bytes(e, count, type);
  set_send_start(e, buf, count, type);
  e.fields |= trace::kRequest;
  e.flags |= trace::kPersistent;
  e.request = rec().add_request(*request, RequestKind::send, true, &ci, 0);
  rec().emit();
}

void recv(Call& c, void*, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
          MPI_Status* status, FreshLook fresh) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_p2p(e, ci, source, tag);
  set_bytes(e, count, type);
  set_fresh(e, fresh);
  add_completion(e, rec().status_completion(ci, status, ci.inter));
  rec().emit();
}

void irecv(Call& c, void*, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
           MPI_Request* request, FreshLook fresh) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_p2p(e, ci, source, tag);
  set_bytes(e, count, type);
  set_fresh(e, fresh);
  e.fields |= trace::kRequest;
  e.request = rec().add_request(*request, RequestKind::recv, false, &ci, source);
  rec().emit();
}

void recv_init(Call& c, void*, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_p2p(e, ci, source, tag);
  set_bytes(e, count, type);
  e.fields |= trace::kRequest;
  e.flags |= trace::kPersistent;
  e.request = rec().add_request(*request, RequestKind::recv, true, &ci, source);
  rec().emit();
}

void sendrecv(Call& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
              int sendtag, void*, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
              MPI_Comm comm, MPI_Status* status, FreshLook fresh) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_p2p(e, ci, dest, sendtag);
  set_bytes(e, sendcount, sendtype);
  set_send_start(e, sendbuf, sendcount, sendtype);
  // The receive half: source as asked in `root`, posted size in recv_bytes, status below.
  e.fields |= trace::kRoot | trace::kRecvBytes;
  e.root = Recorder::world_rank(ci, source, ci.inter);
  e.recv_bytes = bytes_of(recvcount, recvtype);
  set_fresh(e, fresh);
  if (source == MPI_ANY_SOURCE) e.flags |= trace::kWildcardSource;
  if (recvtag == MPI_ANY_TAG) e.flags |= trace::kWildcardTag;
  add_completion(e, rec().status_completion(ci, status, ci.inter));
  rec().emit();
}

void sendrecv_replace(Call& c, void* buf, int count, MPI_Datatype type, int dest, int sendtag,
                      int source, int recvtag, MPI_Comm comm, MPI_Status* status, FreshLook fresh) {
  sendrecv(c, buf, count, type, dest, sendtag, buf, count, type, source, recvtag, comm, status,
           fresh);
}

void probe(Call& c, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_p2p(e, ci, source, tag);
  add_completion(e, rec().status_completion(ci, status, ci.inter));
  rec().emit();
}

void iprobe(Call& c, int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  auto guard = rec().lock();
  const CommInfo& ci = rec().comm(comm);
  if (c.rc() == MPI_SUCCESS && !*flag) {
    const std::uint64_t key =
        (ci.id * 0x9E3779B97F4A7C15ULL) ^
        (static_cast<std::uint64_t>(static_cast<std::uint32_t>(source)) << 32) ^
        static_cast<std::uint32_t>(tag);
    rec().failed_poll(c, key, nullptr, 0, Recorder::world_rank(ci, source, ci.inter), tag, ci.id);
    return;
  }
  Event& e = rec().event(c);
  set_p2p(e, ci, source, tag);
  e.flags |= trace::kSuccess;
  add_completion(e, rec().status_completion(ci, status, ci.inter));
  rec().emit();
}

void mprobe(Call& c, int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_p2p(e, ci, source, tag);
  Completion done = rec().status_completion(ci, status, ci.inter);
  done.request = rec().add_message(*message, &ci);
  e.fields |= trace::kRequest;
  e.request = done.request;
  add_completion(e, done);
  rec().emit();
}

void improbe(Call& c, int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
             MPI_Status* status) {
  if (c.rc() == MPI_SUCCESS && !*flag) {
    auto guard = rec().lock();
    const CommInfo& ci = rec().comm(comm);
    const std::uint64_t key =
        (ci.id * 0x9E3779B97F4A7C15ULL) ^
        (static_cast<std::uint64_t>(static_cast<std::uint32_t>(source)) << 32) ^
        static_cast<std::uint32_t>(tag) ^ 0x5A5A;
    rec().failed_poll(c, key, nullptr, 0, Recorder::world_rank(ci, source, ci.inter), tag, ci.id);
    return;
  }
  mprobe(c, source, tag, comm, message, status);
}

void mrecv(Call& c, void*, int count, MPI_Datatype type, MPI_Message*, MPI_Status* status,
           MPI_Message message_before, FreshLook fresh) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const auto [id, ci] = rec().take_message(message_before);
  set_bytes(e, count, type);
  set_fresh(e, fresh);
  e.fields |= trace::kRequests;
  e.requests.push_back(id);
  if (ci != nullptr) {
    e.fields |= trace::kComm;
    e.comm = ci->id;
    Completion done = rec().status_completion(*ci, status, ci->inter);
    done.request = id;
    add_completion(e, done);
  }
  rec().emit();
}

void imrecv(Call& c, void*, int count, MPI_Datatype type, MPI_Message*, MPI_Request* request,
            MPI_Message message_before, FreshLook fresh) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const auto [id, ci] = rec().take_message(message_before);
  set_bytes(e, count, type);
  set_fresh(e, fresh);
  e.fields |= trace::kRequests | trace::kRequest;
  e.requests.push_back(id);
  if (ci != nullptr) {
    e.fields |= trace::kComm;
    e.comm = ci->id;
  }
  e.request = rec().add_request(*request, RequestKind::recv, false, ci, MPI_ANY_SOURCE);
  rec().emit();
}

// ---- requests ----

void start(Call& c, MPI_Request*, MPI_Request before) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const RequestInfo* info = rec().find_request(before);
  e.fields |= trace::kRequests | trace::kRequest;
  e.requests.push_back(info != nullptr ? info->init_id : 0);
  e.request = rec().restart(before);
  rec().emit();
}

void startall(Call& c, int count, MPI_Request[], const MPI_Request* before) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  e.fields |= trace::kRequests | trace::kRequest;
  // New ids are consecutive: request, request + 1, ... (docs/trace-format.md).
  for (int i = 0; i < count; ++i) {
    const RequestInfo* info = rec().find_request(before[i]);
    e.requests.push_back(info != nullptr ? info->init_id : 0);
    const std::uint64_t id = rec().restart(before[i]);
    if (i == 0) e.request = id;
  }
  rec().emit();
}

void wait(Call& c, MPI_Request*, MPI_Status* status, MPI_Request before) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  add_completion(e, rec().complete(before, status, -1));
  rec().emit();
}

void waitall(Call& c, int count, MPI_Request[], MPI_Status statuses[], const MPI_Request* before) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  set_array_length(e, count);
  e.fields |= trace::kCompletions;
  for (int i = 0; i < count; ++i) {
    const Completion done = rec().complete(before[i], &statuses[i], i);
    if (done.request != 0) e.completions.push_back(done);
  }
  rec().emit();
}

void waitany(Call& c, int count, MPI_Request[], int* index, MPI_Status* status,
             const MPI_Request* before) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  set_array_length(e, count);
  e.fields |= trace::kCompletions;
  if (c.rc() == MPI_SUCCESS && *index != MPI_UNDEFINED)
    e.completions.push_back(rec().complete(before[*index], status, *index));
  rec().emit();
}

void waitsome(Call& c, int incount, MPI_Request[], int* outcount, int indices[],
              MPI_Status statuses[], const MPI_Request* before) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  set_array_length(e, incount);
  e.fields |= trace::kCompletions;
  if (c.rc() == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
    for (int k = 0; k < *outcount; ++k)
      e.completions.push_back(rec().complete(before[indices[k]], &statuses[k], indices[k]));
  rec().emit();
}

namespace {

std::uint64_t array_key(const MPI_Request* array, int count) {
  return reinterpret_cast<std::uintptr_t>(array) * 31 + static_cast<std::uint64_t>(count);
}

}  // namespace

void test(Call& c, MPI_Request*, int* flag, MPI_Status* status, MPI_Request before) {
  auto guard = rec().lock();
  if (c.rc() == MPI_SUCCESS && !*flag) {
    rec().failed_poll(c, HandleMap<int>::key(before), &before, 1, 0, 0, 0);
    return;
  }
  Event& e = rec().event(c);
  e.flags |= trace::kSuccess;
  add_completion(e, rec().complete(before, status, -1));
  rec().emit();
}

void testall(Call& c, int count, MPI_Request requests[], int* flag, MPI_Status statuses[],
             const MPI_Request* before) {
  auto guard = rec().lock();
  if (c.rc() == MPI_SUCCESS && !*flag) {
    rec().failed_poll(c, array_key(requests, count), before, count, 0, 0, 0);
    return;
  }
  Event& e = rec().event(c);
  set_array_length(e, count);
  e.flags |= trace::kSuccess;
  e.fields |= trace::kCompletions;
  for (int i = 0; i < count; ++i) {
    const Completion done = rec().complete(before[i], &statuses[i], i);
    if (done.request != 0) e.completions.push_back(done);
  }
  rec().emit();
}

void testany(Call& c, int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status,
             const MPI_Request* before) {
  auto guard = rec().lock();
  if (c.rc() == MPI_SUCCESS && !*flag) {
    rec().failed_poll(c, array_key(requests, count), before, count, 0, 0, 0);
    return;
  }
  Event& e = rec().event(c);
  set_array_length(e, count);
  e.flags |= trace::kSuccess;
  e.fields |= trace::kCompletions;
  if (c.rc() == MPI_SUCCESS && *index != MPI_UNDEFINED)
    e.completions.push_back(rec().complete(before[*index], status, *index));
  rec().emit();
}

void testsome(Call& c, int incount, MPI_Request requests[], int* outcount, int indices[],
              MPI_Status statuses[], const MPI_Request* before) {
  auto guard = rec().lock();
  if (c.rc() == MPI_SUCCESS && *outcount == 0) {
    rec().failed_poll(c, array_key(requests, incount), before, incount, 0, 0, 0);
    return;
  }
  Event& e = rec().event(c);
  set_array_length(e, incount);
  e.flags |= trace::kSuccess;
  e.fields |= trace::kCompletions;
  if (c.rc() == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
    for (int k = 0; k < *outcount; ++k)
      e.completions.push_back(rec().complete(before[indices[k]], &statuses[k], indices[k]));
  rec().emit();
}

void cancel(Call& c, MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  RequestInfo* info = rec().find_request(*request);
  if (info != nullptr) info->cancel_requested = true;
  e.fields |= trace::kRequests;
  e.requests.push_back(info != nullptr ? info->id : 0);
  rec().emit();
}

void test_cancelled(Call& c, const MPI_Status*, int* flag) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  if (c.rc() == MPI_SUCCESS && *flag) e.flags |= trace::kSuccess;
  rec().emit();
}

void request_free(Call& c, MPI_Request*, MPI_Request before) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const RequestInfo* info = rec().find_request(before);
  e.fields |= trace::kRequests;
  e.requests.push_back(info != nullptr ? info->id : 0);
  if (info != nullptr) {
    const bool persistent = info->persistent;
    // Freeing an active request completes it as far as the program can tell (complete()
    // forgets a plain request; a persistent one is forgotten here, active or not).
    if (info->active) add_completion(e, rec().complete(before, nullptr, -1));
    if (persistent) rec().forget_request(before);
  }
  rec().emit();
}

// ---- collectives ----

void barrier(Call& c, MPI_Comm comm, MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  set_collective(e, rec().comm(comm), request);
  rec().emit();
}

void bcast(Call& c, void*, int count, MPI_Datatype type, int root, MPI_Comm comm,
           MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_collective(e, ci, request);
  set_root(e, ci, root);
  set_bytes(e, count, type);
  rec().emit();
}

void reduce(Call& c, const void* sendbuf, void*, int count, MPI_Datatype type, MPI_Op op, int root,
            MPI_Comm comm, MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_collective(e, ci, request);
  set_root(e, ci, root);
  set_bytes(e, count, type);
  set_reduction(e, op, sendbuf);
  if (is_root(ci, root)) {
    e.fields |= trace::kRecvBytes;
    e.recv_bytes = e.bytes;
  }
  rec().emit();
}

void allreduce(Call& c, const void* sendbuf, void*, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm, MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  set_collective(e, rec().comm(comm), request);
  set_bytes(e, count, type);
  set_reduction(e, op, sendbuf);
  rec().emit();
}

void reduce_scatter(Call& c, const void* sendbuf, void*, const int recvcounts[], MPI_Datatype type,
                    MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_collective(e, ci, request);
  set_reduction(e, op, sendbuf);
  const int n = ci.inter ? static_cast<int>(ci.local.size()) : peer_count(ci);
  per_peer(e.recv_counts, e, trace::kRecvCounts, recvcounts, type, n);
  e.fields |= trace::kBytes;
  e.bytes = sum(e.recv_counts);
  rec().emit();
}

void reduce_scatter_block(Call& c, const void* sendbuf, void*, int recvcount, MPI_Datatype type,
                          MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  set_collective(e, rec().comm(comm), request);
  set_bytes(e, recvcount, type);
  set_reduction(e, op, sendbuf);
  rec().emit();
}

void gather(Call& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void*,
            int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_collective(e, ci, request);
  set_root(e, ci, root);
  const bool at_root = is_root(ci, root);
  if (sendbuf == MPI_IN_PLACE) {
    e.flags |= trace::kInPlace;
    set_bytes(e, recvcount, recvtype);
  } else if (!(ci.inter && at_root)) {
    set_bytes(e, sendcount, sendtype);
  }
  if (at_root) {
    e.fields |= trace::kRecvBytes;
    e.recv_bytes = bytes_of(recvcount, recvtype);
  }
  rec().emit();
}

void scatter(Call& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_collective(e, ci, request);
  set_root(e, ci, root);
  const bool at_root = is_root(ci, root);
  if (at_root) set_bytes(e, sendcount, sendtype);
  if (recvbuf == MPI_IN_PLACE) e.flags |= trace::kInPlace;
  if (!(ci.inter && at_root) && recvbuf != MPI_IN_PLACE) {
    e.fields |= trace::kRecvBytes;
    e.recv_bytes = bytes_of(recvcount, recvtype);
  }
  (void)sendbuf;
  rec().emit();
}

void gatherv(Call& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void*,
             const int recvcounts[], const int[], MPI_Datatype recvtype, int root, MPI_Comm comm,
             MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_collective(e, ci, request);
  set_root(e, ci, root);
  const bool at_root = is_root(ci, root);
  if (sendbuf == MPI_IN_PLACE)
    e.flags |= trace::kInPlace;
  else if (!(ci.inter && at_root))
    set_bytes(e, sendcount, sendtype);
  if (at_root) per_peer(e.recv_counts, e, trace::kRecvCounts, recvcounts, recvtype, peer_count(ci));
  rec().emit();
}

void scatterv(Call& c, const void*, const int sendcounts[], const int[], MPI_Datatype sendtype,
              void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
              MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_collective(e, ci, request);
  set_root(e, ci, root);
  const bool at_root = is_root(ci, root);
  if (at_root) {
    per_peer(e.counts, e, trace::kCounts, sendcounts, sendtype, peer_count(ci));
    e.fields |= trace::kBytes;
    e.bytes = sum(e.counts);
  }
  if (recvbuf == MPI_IN_PLACE) e.flags |= trace::kInPlace;
  if (!(ci.inter && at_root) && recvbuf != MPI_IN_PLACE) {
    e.fields |= trace::kRecvBytes;
    e.recv_bytes = bytes_of(recvcount, recvtype);
  }
  rec().emit();
}

void allgather(Call& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void*,
               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  set_collective(e, rec().comm(comm), request);
  if (sendbuf == MPI_IN_PLACE) {
    e.flags |= trace::kInPlace;
    set_bytes(e, recvcount, recvtype);
  } else {
    set_bytes(e, sendcount, sendtype);
  }
  e.fields |= trace::kRecvBytes;
  e.recv_bytes = bytes_of(recvcount, recvtype);
  rec().emit();
}

void allgatherv(Call& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void*,
                const int recvcounts[], const int[], MPI_Datatype recvtype, MPI_Comm comm,
                MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_collective(e, ci, request);
  per_peer(e.recv_counts, e, trace::kRecvCounts, recvcounts, recvtype, peer_count(ci));
  if (sendbuf == MPI_IN_PLACE) {
    e.flags |= trace::kInPlace;
    const auto me = static_cast<std::size_t>(
        std::find(ci.local.begin(), ci.local.end(), rec().rank()) - ci.local.begin());
    e.fields |= trace::kBytes;
    e.bytes = ci.id == 0 ? e.recv_counts[static_cast<std::size_t>(rec().rank())]
                         : (me < e.recv_counts.size() ? e.recv_counts[me] : 0);
  } else {
    set_bytes(e, sendcount, sendtype);
  }
  rec().emit();
}

void alltoall(Call& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void*,
              int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  set_collective(e, rec().comm(comm), request);
  if (sendbuf == MPI_IN_PLACE) {
    e.flags |= trace::kInPlace;
    set_bytes(e, recvcount, recvtype);
  } else {
    set_bytes(e, sendcount, sendtype);
  }
  e.fields |= trace::kRecvBytes;
  e.recv_bytes = bytes_of(recvcount, recvtype);
  rec().emit();
}

void alltoallv(Call& c, const void* sendbuf, const int sendcounts[], const int[],
               MPI_Datatype sendtype, void*, const int recvcounts[], const int[],
               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_collective(e, ci, request);
  const int n = peer_count(ci);
  per_peer(e.recv_counts, e, trace::kRecvCounts, recvcounts, recvtype, n);
  if (sendbuf == MPI_IN_PLACE) {
    e.flags |= trace::kInPlace;
    e.counts = e.recv_counts;
    e.fields |= trace::kCounts;
  } else {
    per_peer(e.counts, e, trace::kCounts, sendcounts, sendtype, n);
  }
  e.fields |= trace::kBytes;
  e.bytes = sum(e.counts);
  rec().emit();
}

void alltoallw(Call& c, const void* sendbuf, const int sendcounts[], const int[],
               const MPI_Datatype sendtypes[], void*, const int recvcounts[], const int[],
               const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo& ci = rec().comm(comm);
  set_collective(e, ci, request);
  const int n = peer_count(ci);
  e.fields |= trace::kCounts | trace::kRecvCounts | trace::kBytes;
  e.recv_counts.resize(static_cast<std::size_t>(n));
  e.counts.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    e.recv_counts[k] = bytes_of(recvcounts[i], recvtypes[i]);
    e.counts[k] =
        sendbuf == MPI_IN_PLACE ? e.recv_counts[k] : bytes_of(sendcounts[i], sendtypes[i]);
  }
  if (sendbuf == MPI_IN_PLACE) e.flags |= trace::kInPlace;
  e.bytes = sum(e.counts);
  rec().emit();
}

// ---- communicators ----

void comm_split(Call& c, MPI_Comm comm, int, int, MPI_Comm* newcomm) {
  parent_creation(c, comm, newcomm);
}
void comm_split_type(Call& c, MPI_Comm comm, int, int, MPI_Info, MPI_Comm* newcomm) {
  parent_creation(c, comm, newcomm);
}
void comm_dup(Call& c, MPI_Comm comm, MPI_Comm* newcomm) {
  parent_creation(c, comm, newcomm);
}
void comm_dup_with_info(Call& c, MPI_Comm comm, MPI_Info, MPI_Comm* newcomm) {
  parent_creation(c, comm, newcomm);
}
void comm_idup(Call& c, MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  parent_creation(c, comm, newcomm, request);
}
void comm_create(Call& c, MPI_Comm comm, MPI_Group, MPI_Comm* newcomm) {
  parent_creation(c, comm, newcomm);
}
void comm_create_group(Call& c, MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  // Collective over the group only: the parent's creation count differs between its members.
  auto guard = rec().lock();
  CommInfo& parent = rec().comm(comm);
  const std::uint64_t seed =
      keyed((parent.id * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(tag)) ^
            hash_ranks(group_world_ranks(group)));
  creation(c, parent, seed, newcomm);
}
void cart_create(Call& c, MPI_Comm comm, int, const int[], const int[], int, MPI_Comm* newcomm) {
  parent_creation(c, comm, newcomm);
}
void cart_sub(Call& c, MPI_Comm comm, const int[], MPI_Comm* newcomm) {
  parent_creation(c, comm, newcomm);
}
void graph_create(Call& c, MPI_Comm comm, int, const int[], const int[], int, MPI_Comm* newcomm) {
  parent_creation(c, comm, newcomm);
}
void dist_graph_create(Call& c, MPI_Comm comm, int, const int[], const int[], const int[],
                       const int[], MPI_Info, int, MPI_Comm* newcomm) {
  parent_creation(c, comm, newcomm);
}
void dist_graph_create_adjacent(Call& c, MPI_Comm comm, int, const int[], const int[], int,
                                const int[], const int[], MPI_Info, int, MPI_Comm* newcomm) {
  parent_creation(c, comm, newcomm);
}
void intercomm_create(Call& c, MPI_Comm local_comm, int, MPI_Comm, int, int tag,
                      MPI_Comm* newintercomm) {
  // Collective over two groups with different parents: the id comes from both groups.
  auto guard = rec().lock();
  CommInfo& parent = rec().comm(local_comm);
  std::vector<std::int32_t> all = parent.id == 0 ? std::vector<std::int32_t>{} : parent.local;
  if (parent.id == 0)
    for (int r = 0; r < rec().size(); ++r)
      all.push_back(r);
  if (c.rc() == MPI_SUCCESS && *newintercomm != MPI_COMM_NULL) {
    MPI_Group remote;
    PMPI_Comm_remote_group(*newintercomm, &remote);
    const auto remote_ranks = group_world_ranks(remote);
    PMPI_Group_free(&remote);
    all.insert(all.end(), remote_ranks.begin(), remote_ranks.end());
  }
  const std::uint64_t seed = keyed(0x696e746572ULL * 0x9E3779B97F4A7C15ULL +
                                   static_cast<std::uint64_t>(tag) + hash_ranks(all));
  creation(c, parent, seed, newintercomm);
}
void intercomm_merge(Call& c, MPI_Comm intercomm, int, MPI_Comm* newcomm) {
  parent_creation(c, intercomm, newcomm);
}

void comm_free(Call& c, MPI_Comm*, MPI_Comm before) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  const CommInfo* ci = rec().find_comm(before);
  e.fields |= trace::kComm;
  e.comm = ci != nullptr ? ci->id : 0;
  rec().emit();
  rec().forget(before);
}

void opaque(Call& c, MPI_Comm comm, int count, MPI_Datatype type, MPI_Request* request) {
  auto guard = rec().lock();
  Event& e = rec().event(c);
  rec().note_opaque(c.function());
  if (comm != MPI_COMM_NULL) {
    e.fields |= trace::kComm;
    e.comm = rec().comm(comm).id;
  }
  if (count > 0) set_bytes(e, count, type);
  if (request != nullptr && c.rc() == MPI_SUCCESS) {
    e.fields |= trace::kRequest;
    e.request = rec().add_request(*request, RequestKind::opaque, false, nullptr, 0);
  }
  rec().emit();
}

}  // namespace commgauge::tracer::hooks
