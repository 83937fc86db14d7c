#!/usr/bin/env python3
"""OTF2 both ways, checked with tools commgauge does not contain (Debian's otf2-print and
python3-otf2).

1. Out: a synthetic 2-D halo trace is exported with `trace-export --format otf2`; otf2-print
   reads the archive; python3-otf2 reads it and its messages, bytes, collectives, regions and
   communicators must equal what `trace-summary --json` says of the original trace, each
   location's events in time order, every Enter left.
2. In: an archive written here with python3-otf2 the way Score-P writes one (user regions around
   MPI regions, a COMM_LOCATIONS group, a sub-communicator made by MPI_Comm_split, nonblocking
   messages completed in MPI_Waitall, collectives with Score-P's byte counts) is read by
   trace-check, trace-summary and simulate: the summary must show the messages and bytes the
   script wrote, the replay must report the archive's own run time as measured.

usage: otf2_interop.py COMMGAUGE SCRATCH_DIR
"""

import json
import os
import shutil
import subprocess
import sys

import otf2
from otf2.enums import (CollectiveOp, GroupType, LocationGroupType, LocationType, Paradigm,
                        RegionRole)

RANKS = 3
ITERATIONS = 10
MESSAGE_BYTES = 4096
COMPUTE_NS = 200_000
BCAST_BYTES = 1000


def run(*args, check=True):
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if check and p.returncode != 0:
        sys.exit(f"FAILED ({p.returncode}): {' '.join(args)}\n{p.stdout}\n{p.stderr}")
    return p


def expect(condition, message):
    if not condition:
        sys.exit(f"FAILED: {message}")
    print(f"ok: {message}")


def read_archive(anchor):
    """Counts what an OTF2 reader sees, and checks each location's order and nesting."""
    seen = {"sent": 0, "sent_bytes": 0, "received": 0, "received_bytes": 0, "collectives": 0,
            "regions": set(), "locations": 0}
    last = {}
    depth = {}
    with otf2.reader.open(anchor) as trace:
        seen["locations"] = len(trace.definitions.locations)
        seen["comms"] = len(trace.definitions.comms)
        for location, event in trace.events:
            expect_order = last.get(location, 0) <= event.time
            if not expect_order:
                sys.exit(f"FAILED: location {location.name} goes back in time at {event}")
            last[location] = event.time
            if isinstance(event, otf2.events.Enter):
                depth[location] = depth.get(location, 0) + 1
                seen["regions"].add(event.region.name)
            elif isinstance(event, otf2.events.Leave):
                depth[location] = depth.get(location, 0) - 1
                if depth[location] < 0:
                    sys.exit(f"FAILED: a Leave without its Enter on {location.name}")
            elif isinstance(event, (otf2.events.MpiSend, otf2.events.MpiIsend)):
                seen["sent"] += 1
                seen["sent_bytes"] += event.msg_length
            elif isinstance(event, (otf2.events.MpiRecv, otf2.events.MpiIrecv)):
                seen["received"] += 1
                seen["received_bytes"] += event.msg_length
            elif isinstance(event, (otf2.events.MpiCollectiveEnd,
                                    otf2.events.NonBlockingCollectiveComplete)):
                seen["collectives"] += 1
    expect(all(d == 0 for d in depth.values()), "every Enter has its Leave")
    return seen


def export_out(commgauge, scratch):
    trace = os.path.join(scratch, "halo")
    run(commgauge, "synth", "halo2d", "--ranks", "6", "--iterations", "20", "--bytes", "2048",
        "--compute-us", "50", "-o", trace)
    out = os.path.join(scratch, "halo-otf2")
    p = run(commgauge, "trace-export", "--format", "otf2", trace, out)
    print(p.stdout, end="")
    anchor = os.path.join(out, "traces.otf2")
    printed = run("otf2-print", anchor)
    expect("MPI_SEND" in printed.stdout or "MPI_ISEND" in printed.stdout,
           "otf2-print reads the exported archive and lists its messages")
    expect("warning" not in printed.stderr,
           f"otf2-print has no warning (definitions in order): {printed.stderr[:300]}")
    summary_json = os.path.join(scratch, "halo-summary.json")
    run(commgauge, "trace-summary", trace, "--json", summary_json)
    with open(summary_json, encoding="utf-8") as f:
        summary = json.load(f)
    p2p = summary["point_to_point"]
    seen = read_archive(anchor)
    expect(seen["locations"] == 6, f"6 locations (got {seen['locations']})")
    expect(seen["sent"] == seen["received"],
           f"every message sent is received ({seen['sent']} and {seen['received']})")
    expect(seen["sent"] == p2p["messages"],
           f"python3-otf2 counts the summary's {p2p['messages']} messages ({seen['sent']})")
    expect(seen["sent_bytes"] == p2p["bytes"],
           f"and its {p2p['bytes']} bytes ({seen['sent_bytes']})")
    expect({"MPI_Init", "MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Finalize"} <=
           seen["regions"], f"the MPI functions are regions ({sorted(seen['regions'])})")


def write_scorep_like(anchor_dir):
    """A 3-rank program as Score-P records it: returns (messages, bytes, run seconds)."""
    with otf2.writer.open(anchor_dir, timer_resolution=1_000_000_000) as trace:
        d = trace.definitions
        machine = d.system_tree_node("machine")
        nodes = [d.system_tree_node(f"node{n}", class_name="node", parent=machine)
                 for n in range(2)]
        groups = [d.location_group(f"MPI Rank {r}", location_group_type=LocationGroupType.PROCESS,
                                   system_tree_parent=nodes[r // 2]) for r in range(RANKS)]
        locations = [d.location("Master thread", type=LocationType.CPU_THREAD, group=groups[r])
                     for r in range(RANKS)]
        world_group = d.group("MPI_COMM_WORLD", group_type=GroupType.COMM_LOCATIONS,
                              paradigm=Paradigm.MPI, members=locations)
        comm_group = d.group("world ranks", group_type=GroupType.COMM_GROUP,
                             paradigm=Paradigm.MPI, members=list(range(RANKS)))
        del world_group
        world = d.comm("MPI_COMM_WORLD", group=comm_group)
        pair_group = d.group("ranks 0-1", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                             members=[0, 1])
        pair = d.comm("MPI_COMM_WORLD split", group=pair_group, parent=world)

        def region(name, role):
            return d.region(name, paradigm=Paradigm.MPI if name.startswith("MPI_")
                            else Paradigm.USER, region_role=role)
        main = region("main", RegionRole.FUNCTION)
        compute = region("compute", RegionRole.FUNCTION)
        r_init = region("MPI_Init", RegionRole.FUNCTION)
        r_fin = region("MPI_Finalize", RegionRole.FUNCTION)
        r_isend = region("MPI_Isend", RegionRole.POINT2POINT)
        r_irecv = region("MPI_Irecv", RegionRole.POINT2POINT)
        r_waitall = region("MPI_Waitall", RegionRole.POINT2POINT)
        r_allreduce = region("MPI_Allreduce", RegionRole.COLL_ALL2ALL)
        r_split = region("MPI_Comm_split", RegionRole.FUNCTION)
        r_bcast = region("MPI_Bcast", RegionRole.COLL_ONE2ALL)
        end_time = 0
        for r in range(RANKS):
            w = trace.event_writer_from_location(locations[r])
            t = 1_000_000

            def call(reg, duration, body=None):
                nonlocal t
                w.enter(t, reg)
                if body:
                    body(t, t + duration)
                t += duration
                w.leave(t, reg)
            w.enter(t, main)
            call(r_init, 5_000)
            right, left = (r + 1) % RANKS, (r - 1) % RANKS
            for i in range(ITERATIONS):
                w.enter(t, compute)
                t += COMPUTE_NS
                w.leave(t, compute)
                recv_request, send_request = 2 * i + 10, 2 * i + 11
                call(r_irecv, 1_000, lambda a, b: w.mpi_irecv_request(a, recv_request))
                call(r_isend, 2_000, lambda a, b: w.mpi_isend(a, right, world, 7, MESSAGE_BYTES,
                                                              send_request))

                def waitall(a, b):
                    w.mpi_irecv(b, left, world, 7, MESSAGE_BYTES, recv_request)
                    w.mpi_isend_complete(b, send_request)
                call(r_waitall, 20_000, waitall)

                def allreduce(a, b):
                    w.mpi_collective_begin(a)
                    w.mpi_collective_end(b, CollectiveOp.ALLREDUCE, world, 0xFFFFFFFF,
                                         RANKS * 8, RANKS * 8)
                call(r_allreduce, 15_000, allreduce)
            # MPI_Comm_split is collective over MPI_COMM_WORLD; rank 2 gets MPI_COMM_NULL.
            def split(a, b):
                w.mpi_collective_begin(a)
                w.mpi_collective_end(b, CollectiveOp.CREATE_HANDLE, world, 0xFFFFFFFF, 0, 0)
            call(r_split, 30_000, split)
            if r < 2:
                def bcast(a, b):
                    w.mpi_collective_begin(a)
                    at_root = r == 1
                    w.mpi_collective_end(b, CollectiveOp.BCAST, pair, 1,
                                         2 * BCAST_BYTES if at_root else 0, BCAST_BYTES)
                call(r_bcast, 40_000, bcast)
            call(r_fin, 10_000)
            w.leave(t, main)
            end_time = max(end_time, t)
    messages = RANKS * ITERATIONS
    # The replay measures from MPI_Init's end (5 us after the start) to MPI_Finalize's start
    # (10 us before the end), the same on every rank here.
    return messages, messages * MESSAGE_BYTES, (end_time - 1_000_000 - 15_000) * 1e-9


def scorep_in(commgauge, scratch):
    archive = os.path.join(scratch, "scorep-like")
    messages, sent_bytes, seconds = write_scorep_like(archive)
    anchor = os.path.join(archive, "traces.otf2")
    check = run(commgauge, "trace-check", archive)
    print(check.stdout, end="")
    expect(f"{messages} messages matched" in check.stdout,
           f"trace-check matches the archive's {messages} messages")
    summary_json = os.path.join(scratch, "scorep-summary.json")
    s = run(commgauge, "trace-summary", anchor, "--json", summary_json)
    expect("OTF2 archive" in s.stderr, "the summary says it read an OTF2 archive")
    with open(summary_json, encoding="utf-8") as f:
        summary = json.load(f)
    p2p = summary["point_to_point"]
    expect(p2p["messages"] == messages, f"{messages} messages ({p2p['messages']})")
    expect(p2p["bytes"] == sent_bytes, f"{sent_bytes} bytes ({p2p['bytes']})")
    sim_json = os.path.join(scratch, "scorep-sim.json")
    profile = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                           "networks", "loggp-simple.json")
    run(commgauge, "simulate", archive, "--profile", profile, "--json", sim_json)
    with open(sim_json, encoding="utf-8") as f:
        sim = json.load(f)
    model = sim["models"][0] if "models" in sim else sim
    measured = model["measured_seconds"]
    expect(abs(measured - seconds) < 1e-9,
           f"the replay's measured time is the archive's run time ({seconds} s, {measured} s)")
    expect(model["predicted_seconds"] > 0, "the replay predicts a time")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    commgauge, scratch = sys.argv[1], sys.argv[2]
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    try:
        export_out(commgauge, scratch)
        scorep_in(commgauge, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("otf2 interoperability: all checks passed")


if __name__ == "__main__":
    main()
