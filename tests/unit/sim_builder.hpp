#pragma once
// Hand-built traces for simulator tests: each rank's calls written with picosecond ticks
// (ticks_per_second = 1e12) into a container, exactly as the tracer would record them.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include "model/picoseconds.hpp"
#include "trace/format.hpp"
#include "trace/function_ids.hpp"
#include "trace/writer.hpp"

namespace commgauge::testing {

class TraceBuilder {
 public:
  explicit TraceBuilder(std::uint32_t ranks, std::uint32_t init = trace::fn::Init) : ranks_(ranks) {
    for (std::uint32_t r = 0; r < ranks; ++r)
      call(r, init, [](trace::Event&) {});
  }

  /// The tracer's calibrated cost per event on `rank` (header "tracer"; ticks are picoseconds).
  TraceBuilder& tracer_overhead(std::uint32_t rank, std::int64_t ticks_per_event) {
    overhead_ticks_[rank] = ticks_per_event;
    return *this;
  }
  /// The round trip of the tracer's clock-sync ping-pong with rank 0 at MPI_Init, as the index
  /// holds it (rank_info/<rank>/clock/init/round_trip_ns).
  TraceBuilder& init_round_trip(std::uint32_t rank, std::int64_t ns) {
    init_round_trip_ns_[rank] = ns;
    return *this;
  }
  /// Computation on `rank` before its next call.
  TraceBuilder& compute(std::uint32_t rank, model::Picoseconds t) {
    now_[rank] += t.count();
    return *this;
  }
  /// `start`: where the send buffer starts in its page (Event::send_page_offset_bytes), if known.
  TraceBuilder& send(std::uint32_t rank, std::int32_t dest, std::uint64_t bytes,
                     std::int32_t tag = 0, std::uint32_t function = trace::fn::Send,
                     std::optional<std::uint64_t> start = {}) {
    return call(rank, function, [&](trace::Event& e) {
      p2p(e, dest, bytes, tag);
      send_start(e, start);
    });
  }
  /// `fresh_bytes`: of the buffer in pages never touched, `look_ticks`: the tracer's look at it
  /// (trace::Event::fresh_bytes, fresh_look_ticks).
  TraceBuilder& recv(std::uint32_t rank, std::int32_t source, std::uint64_t bytes,
                     std::int32_t tag = 0, std::uint64_t fresh_bytes = 0,
                     std::int64_t look_ticks = 0) {
    return call(rank, trace::fn::Recv, [&](trace::Event& e) {
      p2p(e, source, bytes, tag);
      e.set(trace::kCompletions);
      e.completions.push_back({0, -1, source, tag, bytes, false});
      fresh(e, fresh_bytes, look_ticks);
    });
  }
  /// MPI_Sendrecv: `bytes` to `dest`, as many from `source` (same tag).
  /// `start`: where the send buffer starts in its page (Event::send_page_offset_bytes), if known.
  TraceBuilder& sendrecv(std::uint32_t rank, std::int32_t dest, std::int32_t source,
                         std::uint64_t bytes, std::int32_t tag = 0,
                         std::optional<std::uint64_t> start = {}) {
    return call(rank, trace::fn::Sendrecv, [&](trace::Event& e) {
      p2p(e, dest, bytes, tag);
      e.fields |= trace::kRoot | trace::kRecvBytes;
      e.root = source;
      e.recv_bytes = bytes;
      send_start(e, start);
    });
  }
  /// Returns the request id.
  std::uint64_t isend(std::uint32_t rank, std::int32_t dest, std::uint64_t bytes,
                      std::int32_t tag = 0, std::optional<std::uint64_t> start = {}) {
    const std::uint64_t id = ++request_[rank];
    call(rank, trace::fn::Isend, [&](trace::Event& e) {
      p2p(e, dest, bytes, tag);
      e.set(trace::kRequest);
      e.request = id;
      send_start(e, start);
    });
    return id;
  }
  std::uint64_t irecv(std::uint32_t rank, std::int32_t source, std::uint64_t bytes,
                      std::int32_t tag = 0, std::uint64_t fresh_bytes = 0) {
    const std::uint64_t id = ++request_[rank];
    call(rank, trace::fn::Irecv, [&](trace::Event& e) {
      p2p(e, source, bytes, tag);
      e.set(trace::kRequest);
      e.request = id;
      fresh(e, fresh_bytes);
    });
    return id;
  }
  /// Waitall over (request, source or -1 for a send, tag, bytes received).
  TraceBuilder& waitall(std::uint32_t rank, const std::vector<trace::Completion>& done) {
    return call(rank, done.size() == 1 ? trace::fn::Wait : trace::fn::Waitall,
                [&](trace::Event& e) {
                  e.set(trace::kCompletions);
                  e.set(trace::kCount);
                  e.count = done.size();
                  e.completions = done;
                });
  }
  /// A collective on `comm` (world by default); on an intercommunicator `root` may also be
  /// trace::kRootSelf (MPI_ROOT) or trace::kProcNull.
  TraceBuilder& collective(std::uint32_t rank, std::uint32_t function, std::uint64_t bytes,
                           std::int32_t root = -1, std::uint64_t comm = 0, bool intercomm = false) {
    return call(rank, function, [&](trace::Event& e) {
      e.set(trace::kComm);
      e.comm = comm;
      e.set(trace::kBytes);
      e.bytes = bytes;
      e.set(trace::kRecvBytes);
      e.recv_bytes = bytes;
      e.set(trace::kFlags);
      e.flags = trace::kCommutative | (intercomm ? trace::kIntercomm : 0u);
      if (root >= 0 || intercomm) {
        e.set(trace::kRoot);
        e.root = root;
      }
    });
  }
  template <class Fill>
  TraceBuilder& call(std::uint32_t rank, std::uint32_t function, Fill fill) {
    trace::Event e;
    e.kind = trace::RecordKind::function;
    e.function = function;
    e.start_tick = e.end_tick = now_[rank];
    fill(e);
    events_[rank].push_back(e);
    return *this;
  }

  /// A `comm_create` record: `members` in the rank's view (an intercommunicator: its local group,
  /// then the `remote_size` members of the other group), as the tracer writes it.
  TraceBuilder& comm_create(std::uint32_t rank, std::uint64_t comm,
                            const std::vector<std::int32_t>& members,
                            std::uint32_t remote_size = 0) {
    trace::Event e;
    e.kind = trace::RecordKind::comm_create;
    e.start_tick = e.end_tick = now_[rank];
    e.fields = trace::kComm | trace::kMembers;
    e.comm = comm;
    e.members = members;
    e.remote_size = remote_size;
    if (remote_size > 0) {
      e.fields |= trace::kFlags;
      e.flags = trace::kIntercomm;
    }
    events_[rank].push_back(e);
    return *this;
  }

  /// A `module` record: the object that call sites with module number `module` lie in.
  TraceBuilder& module(std::uint32_t rank, std::uint32_t module, const std::string& path) {
    trace::Event e;
    e.kind = trace::RecordKind::module;
    e.start_tick = e.end_tick = now_[rank];
    e.set(trace::kText);
    e.text = nlohmann::json{{"module", module}, {"path", path}, {"base", 0}}.dump();
    events_[rank].push_back(e);
    return *this;
  }

  /// This process's directory for the containers it writes, removed when the process ends
  /// (every test process used to leave an empty one in /tmp).
  static const std::filesystem::path& directory() {
    struct Owned {
      std::filesystem::path path =
          std::filesystem::temp_directory_path() / ("commgauge-sim-" + std::to_string(getpid()));
      Owned() { std::filesystem::create_directories(path); }
      ~Owned() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
      }
    };
    static const Owned dir;
    return dir.path;
  }

  /// Writes the container (adds MPI_Finalize and the end record to every rank).
  std::filesystem::path write(const std::string& name) {
    const auto path = directory() / (name + ".cgtc");
    std::filesystem::remove(path);
    trace::ContainerWriter out(path, ranks_);
    for (std::uint32_t r = 0; r < ranks_; ++r) {
      trace::BlockEncoder enc(r, out);
      const nlohmann::json header = {
          {"format", "commgauge-trace"},
          {"version", 1},
          {"rank", r},
          {"size", ranks_},
          {"host", "node-0"},
          {"clock", {{"source", "synthetic"}, {"ticks_per_second", 1e12}}},
          {"tracer", {{"overhead_ticks_per_event", overhead_ticks_[r]}}}};
      enc.write_header(header.dump());
      for (const auto& e : events_[r])
        enc.append(e);
      trace::Event fin;
      fin.function = trace::fn::Finalize;
      fin.start_tick = fin.end_tick = now_[r];
      enc.append(fin);
      trace::Event end;
      end.kind = trace::RecordKind::end;
      end.start_tick = end.end_tick = now_[r];
      end.set(trace::kText);
      end.text = R"({"local":{},"incomplete":false})";
      enc.append(end);
      enc.flush();
    }
    nlohmann::json index = {{"format", "commgauge-trace"},
                            {"version", 1},
                            {"ranks", ranks_},
                            {"finished", true},
                            {"complete", true},
                            {"hosts", {"node-0"}},
                            {"placement", std::vector<std::uint32_t>(ranks_, 0)}};
    if (!init_round_trip_ns_.empty()) {
      for (std::uint32_t r = 0; r < ranks_; ++r) {
        const auto it = init_round_trip_ns_.find(r);
        index["rank_info"].push_back(
            {{"rank", r},
             {"clock",
              {{"init",
                {{"phase", "init"},
                 {"tick", 0},
                 {"local_ns", 0},
                 {"offset_ns", 0},
                 {"round_trip_ns", it == init_round_trip_ns_.end() ? 0 : it->second},
                 {"pairing_ns", 0}}}}}});
      }
    }
    out.finish(index.dump());
    return path;
  }

 private:
  static void fresh(trace::Event& e, std::uint64_t fresh_bytes, std::int64_t look_ticks = 0) {
    if (fresh_bytes == 0 && look_ticks == 0) return;
    e.set(trace::kFreshBytes);
    e.fresh_bytes = fresh_bytes;
    e.fresh_look_ticks = look_ticks;
  }
  static void send_start(trace::Event& e, std::optional<std::uint64_t> start) {
    if (!start) return;
    e.set(trace::kSendPageOffset);
    e.send_page_offset_bytes = *start;
  }
  static void p2p(trace::Event& e, std::int32_t peer, std::uint64_t bytes, std::int32_t tag) {
    e.fields |= trace::kPeer | trace::kTag | trace::kComm | trace::kBytes | trace::kCount;
    e.peer = peer;
    e.tag = tag;
    e.bytes = bytes;
    e.count = bytes;
  }

  std::uint32_t ranks_;
  std::map<std::uint32_t, std::int64_t> init_round_trip_ns_;
  std::vector<std::vector<trace::Event>> events_ = std::vector<std::vector<trace::Event>>(ranks_);
  std::vector<std::int64_t> now_ = std::vector<std::int64_t>(ranks_, 0);
  std::vector<std::uint64_t> request_ = std::vector<std::uint64_t>(ranks_, 0);
  std::vector<std::int64_t> overhead_ticks_ = std::vector<std::int64_t>(ranks_, 0);
};

}  // namespace commgauge::testing
