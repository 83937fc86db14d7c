#include "measure/heldout.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "common/error.hpp"
#include "measure/loggp_detail.hpp"
#include "stats/descriptive.hpp"

namespace commgauge::measure {

std::string to_string(HeldOutKind k) {
  switch (k) {
    case HeldOutKind::pingpong:
      return "pingpong";
    case HeldOutKind::allreduce:
      return "allreduce";
    case HeldOutKind::alltoall:
      return "alltoall";
  }
  return "?";
}

void HeldOutOptions::validate() const {
  if (rounds < 1) throw InputError("held-out validation: at least 1 round is needed");
  if (repetitions < 1) throw InputError("held-out validation: at least 1 repetition is needed");
  for (auto s : pingpong_sizes) {
    if (s == 0) throw InputError("held-out validation: a ping-pong size must be at least 1 byte");
  }
}

void to_json(nlohmann::json& j, const HeldOutOptions& o) {
  j = {{"pingpong_sizes", o.pingpong_sizes},
       {"collective_sizes", o.collective_sizes},
       {"rounds", o.rounds},
       {"repetitions", o.repetitions},
       {"seed", o.seed}};
}

void from_json(const nlohmann::json& j, HeldOutOptions& o) {
  o.pingpong_sizes = j.at("pingpong_sizes").get<std::vector<std::uint64_t>>();
  o.collective_sizes = j.at("collective_sizes").get<std::vector<std::uint64_t>>();
  o.rounds = j.at("rounds");
  o.repetitions = j.at("repetitions");
  o.seed = j.at("seed");
}

std::vector<std::uint64_t> midpoints(const std::vector<std::uint64_t>& sizes) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    const auto m = static_cast<std::uint64_t>(
        std::llround(std::sqrt(static_cast<double>(sizes[i]) * static_cast<double>(sizes[i + 1]))));
    if (m > sizes[i] && m < sizes[i + 1]) out.push_back(m);
  }
  return out;
}

namespace {

struct Cell {
  HeldOutKind kind;
  std::uint64_t bytes;
};

// One cell, `reps` times, on either end; returns the source's median time (us).
double run_cell(net::Transport& t, const Cell& c, std::uint32_t reps) {
  const bool source = t.role() == net::Role::source;
  std::vector<double> times;
  if (c.kind == HeldOutKind::pingpong) {
    for (std::uint32_t r = 0; r < reps; ++r) {
      const double t0 = t.now_us();
      if (source) {
        t.send(c.bytes);
        t.recv(c.bytes);
      } else {
        t.recv(c.bytes);
        t.send(c.bytes);
      }
      times.push_back((t.now_us() - t0) / 2);
    }
  } else {
    t.barrier();
    for (std::uint32_t r = 0; r < reps; ++r) {
      const double t0 = t.now_us();
      if (c.kind == HeldOutKind::allreduce) {
        t.allreduce(c.bytes);
      } else {
        t.alltoall(c.bytes);
      }
      times.push_back(t.now_us() - t0);
    }
  }
  return stats::median(times);
}

}  // namespace

std::optional<HeldOutResult> measure_heldout(net::Transport& t, const HeldOutOptions& o,
                                             ProgressSink* progress) {
  o.validate();
  const auto start = std::chrono::steady_clock::now();
  const bool collectives = t.kind() == "mpi";
  std::vector<Cell> cells;
  for (auto s : o.pingpong_sizes)
    cells.push_back({HeldOutKind::pingpong, s});
  if (collectives) {
    for (auto s : o.collective_sizes) {
      cells.push_back({HeldOutKind::allreduce, s});
      cells.push_back({HeldOutKind::alltoall, s});
    }
  }
  // Both ends draw the same order from the source's seed.
  std::uint64_t seed = o.seed;
  if (t.role() == net::Role::source) {
    if (seed == 0) seed = std::random_device{}() | 1;
    t.send_value(seed);
  } else {
    seed = t.recv_value();
  }
  std::mt19937_64 rng(seed);
  HeldOutResult r;
  r.seed = seed;
  r.collectives = collectives;
  std::vector<std::vector<double>> values(cells.size());
  std::vector<std::size_t> order(cells.size());
  for (std::uint32_t round = 0; round < o.rounds; ++round) {
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t i : order)
      values[i].push_back(run_cell(t, cells[i], o.repetitions));
    if (progress) {
      progress->update(fmt::format("held-out round {}", round + 1),
                       static_cast<double>(round + 1) / static_cast<double>(o.rounds));
    }
  }
  t.barrier();
  if (progress) progress->done();
  if (t.role() == net::Role::dest) return std::nullopt;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    HeldOutPoint p;
    p.kind = cells[i].kind;
    p.bytes = cells[i].bytes;
    p.rounds_us = values[i];
    p.time = detail::stat_of(values[i], 1);
    r.points.push_back(p);
  }
  r.source_counters = t.counters();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

void add_loggp_pingpong(HeldOutResult& r, const LoggpResult& loggp) {
  std::vector<HeldOutPoint> points;
  for (const auto& h : loggp.heldout) {
    if (h.one_way_us.empty()) continue;
    HeldOutPoint p;
    p.bytes = h.bytes;
    p.rounds_us = h.one_way_us;
    p.time = detail::stat_of(h.one_way_us, 1);
    points.push_back(std::move(p));
  }
  if (points.empty()) return;
  r.pingpong_seed = loggp.seed;
  r.points.insert(r.points.begin(), points.begin(), points.end());
}

}  // namespace commgauge::measure
