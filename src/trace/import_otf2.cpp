#include "trace/import_otf2.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commgauge/version.hpp"
#include "common/error.hpp"
#include "common/json_text.hpp"
#include "trace/call_semantics.hpp"
#include "trace/function_ids.hpp"
#include "trace/functions.hpp"
#include "trace/otf2_sizes.hpp"
#include "trace/reader.hpp"
#include "trace/writer.hpp"

#if COMMGAUGE_HAVE_OTF2
#include <otf2/otf2.h>
#endif

namespace commgauge::trace {

namespace fs = std::filesystem;

fs::path otf2_anchor(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path.extension() == ".otf2" ? path : fs::path();
  if (!fs::is_directory(path, ec) || fs::exists(path / "index.json", ec)) return {};
  fs::path found;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    if (entry.path().extension() != ".otf2" || !entry.is_regular_file(ec)) continue;
    if (!found.empty()) return {};  // two archives: the user must name one
    found = entry.path();
  }
  return found;
}

#if !COMMGAUGE_HAVE_OTF2

Otf2ImportResult import_otf2(const fs::path& anchor, const fs::path&) {
  throw InputError(anchor.string(),
                   "an OTF2 archive, but this commgauge was built without OTF2 (Debian: "
                   "libotf2-trace-dev; scripts/setup installs it)");
}

#else

namespace {

/// One OTF2 record of a location, as read (the conversion needs to look ahead: a receive
/// request learns its source and tag only from its completion).
struct Raw {
  enum class Type : std::uint8_t {
    enter,
    leave,
    send,
    isend,
    isend_complete,
    irecv_request,
    recv,
    irecv,
    cancelled,
    collective_end,
    nbc_request,
    nbc_complete,
  } type;
  std::uint64_t time = 0;
  std::uint32_t ref = 0;   ///< region (enter, leave) or communicator
  std::uint32_t peer = 0;  ///< receiver, sender or root
  std::uint32_t tag = 0;
  std::uint32_t op = 0;     ///< collective operation
  std::uint64_t bytes = 0;  ///< message length, or bytes sent by a collective
  std::uint64_t received = 0;
  std::uint64_t request = 0;
};

struct Archive {
  std::map<OTF2_StringRef, std::string> strings;
  std::uint64_t resolution = 1000000000, offset = 0;
  std::map<OTF2_RegionRef, OTF2_StringRef> regions;
  struct Location {
    OTF2_LocationGroupRef group = 0;
    std::uint64_t events = 0;
  };
  std::map<OTF2_LocationRef, Location> locations;
  struct LocationGroup {
    OTF2_LocationGroupType type = OTF2_LOCATION_GROUP_TYPE_UNKNOWN;
    OTF2_SystemTreeNodeRef node = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
  };
  std::map<OTF2_LocationGroupRef, LocationGroup> groups;
  std::map<OTF2_SystemTreeNodeRef, OTF2_StringRef> nodes;
  struct Group {
    OTF2_GroupType type = OTF2_GROUP_TYPE_UNKNOWN;
    OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
    OTF2_GroupFlag flags = OTF2_GROUP_FLAG_NONE;
    std::vector<std::uint64_t> members;
  };
  std::map<OTF2_GroupRef, Group> member_groups;
  struct Comm {
    OTF2_GroupRef group = 0;
  };
  std::map<OTF2_CommRef, Comm> comms;

  std::string string(OTF2_StringRef ref) const {
    const auto it = strings.find(ref);
    return it == strings.end() ? std::string() : it->second;
  }
};

void check(OTF2_ErrorCode code, const fs::path& anchor, const char* what) {
  if (code != OTF2_SUCCESS)
    throw TraceError(anchor.string(),
                     fmt::format("OTF2: {}: {} ({})", what, OTF2_Error_GetName(code),
                                 OTF2_Error_GetDescription(code)));
}

Archive& archive_of(void* user) {
  return *static_cast<Archive*>(user);
}

void read_definitions(OTF2_Reader* reader, const fs::path& anchor, Archive& a) {
  OTF2_GlobalDefReader* g = OTF2_Reader_GetGlobalDefReader(reader);
  if (g == nullptr) throw TraceError(anchor.string(), "OTF2: no global definitions");
  OTF2_GlobalDefReaderCallbacks* cb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb,
                                                  [](void* u, OTF2_StringRef self, const char* s) {
                                                    archive_of(u).strings[self] = s;
                                                    return OTF2_CALLBACK_SUCCESS;
                                                  });
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(
      cb, [](void* u, uint64_t resolution, uint64_t offset, uint64_t, uint64_t) {
        archive_of(u).resolution = resolution;
        archive_of(u).offset = offset;
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(
      cb, [](void* u, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef,
             OTF2_SystemTreeNodeRef) {
        archive_of(u).nodes[self] = name;
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(
      cb, [](void* u, OTF2_LocationGroupRef self, OTF2_StringRef, OTF2_LocationGroupType type,
             OTF2_SystemTreeNodeRef node, OTF2_LocationGroupRef) {
        archive_of(u).groups[self] = {type, node};
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(
      cb, [](void* u, OTF2_LocationRef self, OTF2_StringRef, OTF2_LocationType, uint64_t events,
             OTF2_LocationGroupRef group) {
        archive_of(u).locations[self] = {group, events};
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(
      cb, [](void* u, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_StringRef,
             OTF2_RegionRole, OTF2_Paradigm, OTF2_RegionFlag, OTF2_StringRef, uint32_t, uint32_t) {
        archive_of(u).regions[self] = name;
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(
      cb, [](void* u, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type,
             OTF2_Paradigm paradigm, OTF2_GroupFlag flags, uint32_t n, const uint64_t* members) {
        archive_of(u).member_groups[self] = {type, paradigm, flags,
                                             std::vector<std::uint64_t>(members, members + n)};
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(
      cb, [](void* u, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef group, OTF2_CommRef,
             OTF2_CommFlag) {
        archive_of(u).comms[self] = {group};
        return OTF2_CALLBACK_SUCCESS;
      });
  const OTF2_ErrorCode registered = OTF2_Reader_RegisterGlobalDefCallbacks(reader, g, cb, &a);
  OTF2_GlobalDefReaderCallbacks_Delete(cb);
  check(registered, anchor, "RegisterGlobalDefCallbacks");
  uint64_t read = 0;
  check(OTF2_Reader_ReadAllGlobalDefinitions(reader, g, &read), anchor, "ReadAllGlobalDefinitions");
  OTF2_Reader_CloseGlobalDefReader(reader, g);
}

std::vector<Raw>& raws(void* u) {
  return *static_cast<std::vector<Raw>*>(u);
}

OTF2_EvtReaderCallbacks* event_callbacks() {
  OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
  using T = Raw::Type;
  OTF2_EvtReaderCallbacks_SetEnterCallback(
      cb, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
             OTF2_RegionRef region) {
        raws(u).push_back({T::enter, t, region});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetLeaveCallback(
      cb, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
             OTF2_RegionRef region) {
        raws(u).push_back({T::leave, t, region});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(
      cb, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
             uint32_t receiver, OTF2_CommRef comm, uint32_t tag, uint64_t length) {
        raws(u).push_back({T::send, t, comm, receiver, tag, 0, length});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(
      cb,
      [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
         uint32_t receiver, OTF2_CommRef comm, uint32_t tag, uint64_t length, uint64_t request) {
        raws(u).push_back({T::isend, t, comm, receiver, tag, 0, length, 0, request});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(
      cb, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
             uint64_t request) {
        raws(u).push_back({T::isend_complete, t, 0, 0, 0, 0, 0, 0, request});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(
      cb, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
             uint64_t request) {
        raws(u).push_back({T::irecv_request, t, 0, 0, 0, 0, 0, 0, request});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(
      cb, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
             uint32_t sender, OTF2_CommRef comm, uint32_t tag, uint64_t length) {
        raws(u).push_back({T::recv, t, comm, sender, tag, 0, length});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(
      cb, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
             uint32_t sender, OTF2_CommRef comm, uint32_t tag, uint64_t length, uint64_t request) {
        raws(u).push_back({T::irecv, t, comm, sender, tag, 0, length, 0, request});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(
      cb, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
             uint64_t request) {
        raws(u).push_back({T::cancelled, t, 0, 0, 0, 0, 0, 0, request});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(
      cb,
      [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
         OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t received) {
        raws(u).push_back({T::collective_end, t, comm, root, 0, op, sent, received});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(
      cb, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
             uint64_t request) {
        raws(u).push_back({T::nbc_request, t, 0, 0, 0, 0, 0, 0, request});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(
      cb, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
             OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root, uint64_t sent,
             uint64_t received, uint64_t request) {
        raws(u).push_back({T::nbc_complete, t, comm, root, 0, op, sent, received, request});
        return OTF2_CALLBACK_SUCCESS;
      });
  return cb;
}

std::optional<collectives::Operation> from_otf2(std::uint32_t op) {
  switch (op) {
    case OTF2_COLLECTIVE_OP_BARRIER:
      return collectives::Operation::barrier;
    case OTF2_COLLECTIVE_OP_BCAST:
      return collectives::Operation::bcast;
    case OTF2_COLLECTIVE_OP_GATHER:
      return collectives::Operation::gather;
    case OTF2_COLLECTIVE_OP_GATHERV:
      return collectives::Operation::gatherv;
    case OTF2_COLLECTIVE_OP_SCATTER:
      return collectives::Operation::scatter;
    case OTF2_COLLECTIVE_OP_SCATTERV:
      return collectives::Operation::scatterv;
    case OTF2_COLLECTIVE_OP_ALLGATHER:
      return collectives::Operation::allgather;
    case OTF2_COLLECTIVE_OP_ALLGATHERV:
      return collectives::Operation::allgatherv;
    case OTF2_COLLECTIVE_OP_ALLTOALL:
      return collectives::Operation::alltoall;
    case OTF2_COLLECTIVE_OP_ALLTOALLV:
      return collectives::Operation::alltoallv;
    case OTF2_COLLECTIVE_OP_ALLTOALLW:
      return collectives::Operation::alltoallw;
    case OTF2_COLLECTIVE_OP_ALLREDUCE:
      return collectives::Operation::allreduce;
    case OTF2_COLLECTIVE_OP_REDUCE:
      return collectives::Operation::reduce;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER:
      return collectives::Operation::reduce_scatter;
    case OTF2_COLLECTIVE_OP_SCAN:
      return collectives::Operation::scan;
    case OTF2_COLLECTIVE_OP_EXSCAN:
      return collectives::Operation::exscan;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK:
      return collectives::Operation::reduce_scatter_block;
    default:
      return std::nullopt;
  }
}

/// The ranks, communicators and hosts of the archive in commgauge's terms.
struct World {
  std::vector<OTF2_LocationRef> master;  ///< per rank, its first location
  std::map<OTF2_LocationRef, std::pair<std::uint32_t, std::uint32_t>> rank_thread;
  struct Comm {
    std::uint64_t id = 0;
    std::vector<std::int32_t> members;  ///< world ranks
    bool global_ranks = false;          ///< event ranks are world ranks already
    bool self = false;
  };
  std::map<OTF2_CommRef, Comm> comms;
  std::vector<std::string> hosts;
  std::vector<std::size_t> placement;
};

World world_of(const Archive& a, const fs::path& anchor) {
  World w;
  const Archive::Group* locations = nullptr;
  for (const auto& [ref, g] : a.member_groups)
    if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS && g.paradigm == OTF2_PARADIGM_MPI) {
      locations = &g;
      break;
    }
  if (locations != nullptr) {
    for (std::uint64_t loc : locations->members)
      w.master.push_back(loc);
  } else {
    // No rank map: location groups of type process, in reference order, are the ranks.
    for (const auto& [ref, g] : a.groups) {
      if (g.type != OTF2_LOCATION_GROUP_TYPE_PROCESS) continue;
      for (const auto& [loc, l] : a.locations)
        if (l.group == ref) {
          w.master.push_back(loc);
          break;
        }
    }
  }
  if (w.master.empty())
    throw TraceError(anchor.string(),
                     "the OTF2 archive defines no MPI ranks (no COMM_LOCATIONS "
                     "group and no process location groups)");
  std::map<OTF2_LocationGroupRef, std::uint32_t> rank_of_group;
  for (std::uint32_t r = 0; r < w.master.size(); ++r) {
    const auto it = a.locations.find(w.master[r]);
    if (it == a.locations.end())
      throw TraceError(anchor.string(),
                       fmt::format("rank {}'s location {} is not defined", r, w.master[r]));
    rank_of_group[it->second.group] = r;
    w.rank_thread[w.master[r]] = {r, 0};
  }
  std::map<std::uint32_t, std::uint32_t> threads;
  for (const auto& [loc, l] : a.locations) {
    if (w.rank_thread.count(loc)) continue;
    const auto g = rank_of_group.find(l.group);
    if (g == rank_of_group.end()) continue;  // not an MPI process (a GPU stream...)
    w.rank_thread[loc] = {g->second, ++threads[g->second]};
  }
  // Hosts: the system tree node each rank's location group hangs under.
  std::map<OTF2_SystemTreeNodeRef, std::size_t> host_of_node;
  w.placement.assign(w.master.size(), 0);
  for (std::uint32_t r = 0; r < w.master.size(); ++r) {
    const auto g = a.groups.find(a.locations.at(w.master[r]).group);
    const OTF2_SystemTreeNodeRef node =
        g == a.groups.end() ? OTF2_UNDEFINED_SYSTEM_TREE_NODE : g->second.node;
    auto [it, added] = host_of_node.emplace(node, w.hosts.size());
    if (added) {
      const auto name = a.nodes.find(node);
      w.hosts.push_back(name == a.nodes.end() ? "host-" + std::to_string(w.hosts.size())
                                              : a.string(name->second));
    }
    w.placement[r] = it->second;
  }
  // Communicators: the self group is MPI_COMM_SELF (id 1); the first whose members are all
  // ranks in order is MPI_COMM_WORLD (id 0); the others get ids above both.
  const auto n = static_cast<std::int32_t>(w.master.size());
  bool have_world = false;
  for (const auto& [ref, c] : a.comms) {
    World::Comm out;
    const auto g = a.member_groups.find(c.group);
    if (g == a.member_groups.end())
      throw TraceError(anchor.string(),
                       fmt::format("communicator {} refers to undefined group {}", ref, c.group));
    if (g->second.type == OTF2_GROUP_TYPE_COMM_SELF) {
      out.id = 1;
      out.self = true;
    } else {
      for (std::uint64_t m : g->second.members) {
        if (m >= static_cast<std::uint64_t>(n))
          throw TraceError(anchor.string(), fmt::format("communicator {} has member {}, but the "
                                                        "archive has {} ranks",
                                                        ref, m, n));
        out.members.push_back(static_cast<std::int32_t>(m));
      }
      out.global_ranks = (g->second.flags & OTF2_GROUP_FLAG_GLOBAL_MEMBERS) != 0;
      bool all = static_cast<std::int32_t>(out.members.size()) == n;
      for (std::int32_t i = 0; all && i < n; ++i)
        all = out.members[static_cast<std::size_t>(i)] == i;
      if (all && !have_world) {
        out.id = 0;
        have_world = true;
      } else {
        out.id = (std::uint64_t{1} << 32) + ref;
      }
    }
    w.comms[ref] = std::move(out);
  }
  return w;
}

/// Converts one location's records into commgauge events.
class LocationConverter {
 public:
  LocationConverter(const Archive& a, const World& w, std::uint32_t rank, std::uint32_t thread,
                    Otf2ImportResult& result)
      : a_(a), w_(w), rank_(rank), thread_(thread), result_(result) {}

  std::vector<Event> run(const std::vector<Raw>& raws);

 private:
  [[noreturn]] void fail(const std::string& m) const {
    throw TraceError(fmt::format("OTF2 rank {} thread {}: {}", rank_, thread_, m));
  }
  void note(const std::string& n) {
    if (std::find(result_.notes.begin(), result_.notes.end(), n) == result_.notes.end())
      result_.notes.push_back(n);
  }
  const World::Comm& comm(std::uint32_t ref) const {
    const auto it = w_.comms.find(ref);
    if (it == w_.comms.end()) fail(fmt::format("communicator {} is not defined", ref));
    return it->second;
  }
  std::int32_t world_rank(const World::Comm& c, std::uint32_t local) const {
    if (c.self) return static_cast<std::int32_t>(rank_);
    if (c.global_ranks) return static_cast<std::int32_t>(local);
    if (local >= c.members.size())
      fail(fmt::format("rank {} of a communicator of {} members", local, c.members.size()));
    return c.members[local];
  }
  std::uint64_t my_position(const World::Comm& c) const {
    if (c.self) return 0;
    const auto it = std::find(c.members.begin(), c.members.end(), static_cast<std::int32_t>(rank_));
    return static_cast<std::uint64_t>(it - c.members.begin());
  }
  std::int64_t tick(std::uint64_t t) const {
    return static_cast<std::int64_t>(t >= a_.offset ? t - a_.offset : 0);
  }
  void use_comm(std::uint32_t ref, Event& e) {
    const World::Comm& c = comm(ref);
    e.set(kComm);
    e.comm = c.id;
  }
  void collective(const Raw& r, Event& e);
  void emit(Event e);

  const Archive& a_;
  const World& w_;
  std::uint32_t rank_, thread_;
  Otf2ImportResult& result_;
  std::vector<Event> out_;
  std::set<std::uint64_t> announced_{0, 1};
  std::unordered_map<std::uint64_t, std::deque<const Raw*>> irecv_done_, nbc_done_;
};

void LocationConverter::collective(const Raw& r, Event& e) {
  const auto op = from_otf2(r.op);
  if (!op) return;
  use_comm(r.ref, e);
  const World::Comm& c = comm(r.ref);
  const std::uint64_t n = c.self ? 1 : c.members.size();
  std::uint64_t root = UINT64_MAX;
  if (collectives::rooted(*op) && r.peer < n) {
    e.set(kRoot);
    e.root = world_rank(c, r.peer);
    root = c.global_ranks
               ? static_cast<std::uint64_t>(std::find(c.members.begin(), c.members.end(), e.root) -
                                            c.members.begin())
               : r.peer;
  }
  collective_buffers(*op, {r.bytes, r.received}, n, my_position(c), root, e);
  if (*op == collectives::Operation::gatherv || *op == collectives::Operation::scatterv ||
      *op == collectives::Operation::allgatherv || *op == collectives::Operation::alltoallv ||
      *op == collectives::Operation::alltoallw || *op == collectives::Operation::reduce_scatter)
    note("per-peer counts of v-collectives are spread evenly over OTF2's totals");
  ++result_.collectives;
}

void LocationConverter::emit(Event e) {
  if (e.has(kComm) && !announced_.count(e.comm)) {
    for (const auto& [ref, c] : w_.comms) {
      if (c.id != e.comm) continue;
      Event create;
      create.kind = RecordKind::comm_create;
      create.start_tick = create.end_tick = e.start_tick;
      create.fields = kComm | kMembers;
      create.comm = c.id;
      create.members = c.members;
      create.thread = thread_;
      out_.push_back(std::move(create));
      break;
    }
    announced_.insert(e.comm);
  }
  out_.push_back(std::move(e));
  ++result_.calls;
}

std::vector<Event> LocationConverter::run(const std::vector<Raw>& raws) {
  using T = Raw::Type;
  // Look ahead: what each receive request and nonblocking collective turned out to be.
  for (const Raw& r : raws) {
    if (r.type == T::irecv) irecv_done_[r.request].push_back(&r);
    if (r.type == T::nbc_complete) nbc_done_[r.request].push_back(&r);
  }
  std::optional<Event> call;
  OTF2_RegionRef call_region = 0;
  int nested = 0;
  bool started = false, finalized = false;
  std::uint64_t first_time = raws.empty() ? 0 : raws.front().time;
  std::uint64_t last_time = raws.empty() ? 0 : raws.back().time;
  auto our_request = [](std::uint64_t otf2_request) { return otf2_request + 1; };
  for (const Raw& r : raws) {
    if (r.type == T::enter) {
      if (call) {
        ++nested;
        continue;
      }
      const auto region = a_.regions.find(r.ref);
      const std::string name = region == a_.regions.end() ? "" : a_.string(region->second);
      const auto id = function_id(name);
      if (!id) continue;  // not an MPI function: computation
      const FunctionInfo* info = find_function(*id);
      if (info->function_class == FunctionClass::local) continue;
      call.emplace();
      call->function = *id;
      call->start_tick = tick(r.time);
      call->thread = thread_;
      if (thread_ != 0) call->set(kThread);
      call_region = r.ref;
      nested = 0;
      if ((*id == fn::Init || *id == fn::Init_thread)) started = true;
      continue;
    }
    if (r.type == T::leave) {
      if (!call) continue;
      if (nested > 0 || r.ref != call_region) {
        nested = std::max(0, nested - 1);
        continue;
      }
      Event e = std::move(*call);
      call.reset();
      e.end_tick = tick(r.time);
      const CallSemantics& s = semantics_of(e.function);
      if (!started) {
        Event init;
        init.function = fn::Init;
        init.start_tick = init.end_tick = e.start_tick;
        emit(init);
        started = true;
        note("ranks without an MPI_Init region start with one of no duration");
      }
      if (s.kind == CallKind::finalize) finalized = true;
      if (s.kind == CallKind::send_init || s.kind == CallKind::recv_init ||
          (s.kind == CallKind::request_free && e.completions.empty())) {
        continue;  // persistent requests: each start is written as the call it starts
      }
      // A call without the records its replay needs (commgauge's export writes calls on
      // intercommunicators so) is left out: its time becomes computation.
      const bool missing =
          ((s.collective || s.kind == CallKind::comm_free || s.kind == CallKind::sendrecv) &&
           !e.has(kComm)) ||
          ((s.kind == CallKind::send || s.kind == CallKind::isend) && !e.has(kPeer)) ||
          ((s.kind == CallKind::recv || s.kind == CallKind::mrecv) && e.completions.empty()) ||
          ((s.kind == CallKind::irecv || s.kind == CallKind::imrecv) && !e.has(kRequest));
      if (missing) {
        note(
            "MPI calls without the OTF2 records their replay needs (calls on "
            "intercommunicators) are left out: their time is computation");
        continue;
      }
      if (s.kind == CallKind::comm_creation && !e.has(kComm)) {
        e.set(kComm);
        e.comm = 0;
      }
      if (!e.completions.empty()) {
        e.set(kCompletions);
        e.set(kCount);
        e.count = e.completions.size();
      }
      if (s.kind == CallKind::start) continue;  // its records were written as they came
      emit(std::move(e));
      continue;
    }
    if (!call) {
      note("MPI records outside an MPI function's region are ignored");
      continue;
    }
    Event& e = *call;
    const CallSemantics& s = semantics_of(e.function);
    switch (r.type) {
      case T::send:
      case T::isend: {
        const World::Comm& c = comm(r.ref);
        Event* target = &e;
        Event started_call;
        if (s.kind == CallKind::start) {  // a persistent send started: written as MPI_Isend
          started_call.function = fn::Isend;
          started_call.start_tick = started_call.end_tick = e.start_tick;
          started_call.thread = e.thread;
          target = &started_call;
          note("persistent requests are written as MPI_Isend/MPI_Irecv at each start");
        }
        target->set(kPeer);
        target->set(kTag);
        target->set(kBytes);
        target->peer = world_rank(c, r.peer);
        target->tag = static_cast<std::int32_t>(r.tag);
        target->bytes = r.bytes;
        use_comm(r.ref, *target);
        if (r.type == T::isend) {
          target->set(kRequest);
          target->request = our_request(r.request);
        }
        ++result_.messages;
        if (target == &started_call) emit(std::move(started_call));
        break;
      }
      case T::recv: {
        const World::Comm& c = comm(r.ref);
        Completion done;
        done.source = world_rank(c, r.peer);
        done.tag = static_cast<std::int32_t>(r.tag);
        done.bytes = r.bytes;
        use_comm(r.ref, e);
        if (s.kind == CallKind::sendrecv) {
          e.set(kRoot);
          e.root = done.source;
          e.set(kRecvBytes);
          e.recv_bytes = r.bytes;
        } else {
          if (s.kind != CallKind::recv) {
            e.function = fn::Recv;
            note("matched receives (MPI_Mrecv) are written as MPI_Recv");
          }
          e.set(kPeer);
          e.set(kTag);
          e.set(kBytes);
          e.peer = done.source;
          e.tag = done.tag;
          e.bytes = r.bytes;
        }
        e.set(kCompletions);
        e.completions.push_back(done);
        break;
      }
      case T::irecv_request: {
        Event posted;
        Event* target = &e;
        if (s.kind != CallKind::irecv) {
          posted.function = fn::Irecv;
          posted.start_tick = posted.end_tick = e.start_tick;
          posted.thread = e.thread;
          target = &posted;
          note("persistent requests are written as MPI_Isend/MPI_Irecv at each start");
        }
        target->set(kRequest);
        target->request = our_request(r.request);
        auto& q = irecv_done_[r.request];
        // Completions of a request id follow its posts in order (an id is reused only after
        // its request completed).
        while (!q.empty() && q.front()->time < r.time)
          q.pop_front();
        if (q.empty()) {
          target->set(kPeer);
          target->set(kTag);
          target->peer = kAnySource;
          target->tag = -1;
          target->set(kFlags);
          target->flags |= kWildcardSource | kWildcardTag;
          target->set(kComm);
          target->comm = 0;
          note(
              "receive requests that never complete are written as wildcard receives on "
              "MPI_COMM_WORLD");
        } else {
          const Raw& done = *q.front();
          q.pop_front();
          const World::Comm& c = comm(done.ref);
          target->set(kPeer);
          target->set(kTag);
          target->set(kBytes);
          target->peer = world_rank(c, done.peer);
          target->tag = static_cast<std::int32_t>(done.tag);
          target->bytes = done.bytes;
          use_comm(done.ref, *target);
          note(
              "a receive request's source and tag are taken from its completion (OTF2 does not "
              "record what was asked for)");
        }
        if (target == &posted) emit(std::move(posted));
        break;
      }
      case T::isend_complete:
      case T::cancelled: {
        Completion done;
        done.request = our_request(r.request);
        done.index = static_cast<std::int32_t>(e.completions.size());
        done.cancelled = r.type == T::cancelled;
        e.completions.push_back(done);
        break;
      }
      case T::irecv: {
        Completion done;
        done.request = our_request(r.request);
        done.index = static_cast<std::int32_t>(e.completions.size());
        done.source = world_rank(comm(r.ref), r.peer);
        done.tag = static_cast<std::int32_t>(r.tag);
        done.bytes = r.bytes;
        e.completions.push_back(done);
        break;
      }
      case T::collective_end:
        if (s.kind == CallKind::comm_creation || s.kind == CallKind::comm_free)
          use_comm(r.ref, e);
        else if (s.collective)
          collective(r, e);
        break;
      case T::nbc_request: {
        e.set(kRequest);
        e.request = our_request(r.request);
        auto& q = nbc_done_[r.request];
        while (!q.empty() && q.front()->time < r.time)
          q.pop_front();
        if (q.empty())
          fail(fmt::format("nonblocking collective request {} never completes", r.request));
        collective(*q.front(), e);
        q.pop_front();
        break;
      }
      case T::nbc_complete: {
        Completion done;
        done.request = our_request(r.request);
        done.index = static_cast<std::int32_t>(e.completions.size());
        e.completions.push_back(done);
        break;
      }
      default:
        break;
    }
  }
  if (call) fail("the trace ends inside an MPI call");
  if (!started) {
    Event init;
    init.function = fn::Init;
    init.start_tick = init.end_tick = tick(first_time);
    emit(init);
  }
  if (!finalized) {
    Event fin;
    fin.function = fn::Finalize;
    fin.start_tick = fin.end_tick = tick(last_time);
    emit(fin);
    note("ranks without an MPI_Finalize region end with one of no duration");
  }
  return std::move(out_);
}

struct ReaderCloser {
  OTF2_Reader* reader;
  ~ReaderCloser() {
    if (reader != nullptr) OTF2_Reader_Close(reader);
  }
};

}  // namespace

Otf2ImportResult import_otf2(const fs::path& anchor, const fs::path& container) {
  OTF2_Reader* reader = OTF2_Reader_Open(anchor.c_str());
  if (reader == nullptr) throw TraceError(anchor.string(), "OTF2 cannot open this archive");
  ReaderCloser closer{reader};
  check(OTF2_Reader_SetSerialCollectiveCallbacks(reader), anchor, "SetSerialCollectiveCallbacks");
  Archive a;
  read_definitions(reader, anchor, a);
  const World w = world_of(a, anchor);
  Otf2ImportResult result;
  result.ranks = static_cast<std::uint32_t>(w.master.size());
  {
    char* creator = nullptr;
    if (OTF2_Reader_GetCreator(reader, &creator) == OTF2_SUCCESS && creator != nullptr) {
      result.creator = creator;
      free(creator);
    }
  }
  for (const auto& [loc, rt] : w.rank_thread)
    check(OTF2_Reader_SelectLocation(reader, loc), anchor, "SelectLocation");
  // Local definitions carry the mapping tables of archives whose events use local references.
  const bool local_defs = OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS;
  if (local_defs) {
    for (const auto& [loc, rt] : w.rank_thread) {
      OTF2_DefReader* d = OTF2_Reader_GetDefReader(reader, loc);
      if (d == nullptr) continue;
      uint64_t read = 0;
      OTF2_Reader_ReadAllLocalDefinitions(reader, d, &read);
      OTF2_Reader_CloseDefReader(reader, d);
    }
    OTF2_Reader_CloseDefFiles(reader);
  }
  check(OTF2_Reader_OpenEvtFiles(reader), anchor, "OpenEvtFiles");
  std::vector<std::vector<std::pair<std::uint32_t, std::vector<Event>>>> per_rank(result.ranks);
  OTF2_EvtReaderCallbacks* callbacks = event_callbacks();
  for (const auto& [loc, rt] : w.rank_thread) {
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(reader, loc);
    if (er == nullptr) continue;
    std::vector<Raw> raws;
    check(OTF2_Reader_RegisterEvtCallbacks(reader, er, callbacks, &raws), anchor,
          "RegisterEvtCallbacks");
    uint64_t read = 0;
    check(OTF2_Reader_ReadAllLocalEvents(reader, er, &read), anchor, "ReadAllLocalEvents");
    OTF2_Reader_CloseEvtReader(reader, er);
    ++result.locations;
    per_rank[rt.first].emplace_back(rt.second,
                                    LocationConverter(a, w, rt.first, rt.second, result).run(raws));
  }
  OTF2_EvtReaderCallbacks_Delete(callbacks);
  OTF2_Reader_CloseEvtFiles(reader);

  const double ticks_per_second = static_cast<double>(a.resolution);
  const nlohmann::json imported = {
      {"format", "otf2"}, {"archive", fs::absolute(anchor).string()}, {"creator", result.creator}};
  ContainerWriter writer(container, result.ranks);
  for (std::uint32_t r = 0; r < result.ranks; ++r) {
    const nlohmann::json header = {{"format", "commgauge-trace"},
                                   {"version", kVersion},
                                   {"rank", r},
                                   {"size", result.ranks},
                                   {"host", w.hosts[w.placement[r]]},
                                   {"pid", 0},
                                   {"clock",
                                    {{"source", "otf2"},
                                     {"ticks_per_second", ticks_per_second},
                                     {"resolution_ns", 1e9 / ticks_per_second}}},
                                   {"thread_level", per_rank[r].size() > 1 ? "multiple" : "single"},
                                   {"language", "c"},
                                   {"tracer",
                                    {{"overhead_ticks_per_event", 0},
                                     {"overhead_ns_per_event", 0.0},
                                     {"local_overhead_ns", 0.0},
                                     {"cpu_time", false},
                                     {"commgauge_version", commgauge::kVersion}}},
                                   {"imported", imported}};
    BlockEncoder encoder(r, writer);
    encoder.write_header(json_text(header));
    // Threads merged by time, thread 0 first among equals.
    std::vector<Event> events;
    for (auto& [thread, list] : per_rank[r])
      for (auto& e : list)
        events.push_back(std::move(e));
    std::stable_sort(events.begin(), events.end(),
                     [](const Event& x, const Event& y) { return x.start_tick < y.start_tick; });
    std::int64_t last = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (per_rank[r].size() > 1) {
        events[i].set(kThread);
        events[i].sequence = i;
      }
      last = std::max(last, events[i].end_tick);
      encoder.append(events[i]);
    }
    Event end;
    end.kind = RecordKind::end;
    end.start_tick = end.end_tick = last;
    end.fields = kText;
    end.text = R"({"incomplete":false,"local":{}})";
    encoder.append(end);
    encoder.flush();
  }
  nlohmann::json index = written_index(result.ranks, "unknown: imported from OTF2", "otf2",
                                       1e9 / ticks_per_second, commgauge::kVersion);
  index["hosts"] = w.hosts;
  index["placement"] = w.placement;
  index["imported"] = imported;
  writer.finish(json_text(index));
  return result;
}

#endif

}  // namespace commgauge::trace
