#include "report/timeline_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "report/plot.hpp"
#include "trace/functions.hpp"

namespace commgauge::report {

TimelineWindow parse_timeline_window(const std::string& spec) {
  const auto colon = spec.find(':');
  const auto bad = [&] {
    return InputError("timeline_window",
                      fmt::format("expected START:END in microseconds from the end of "
                                  "MPI_Init, 0 <= START < END, got \"{}\"",
                                  spec));
  };
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size()) throw bad();
  const auto number = [&](const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(v)) throw bad();
    return v;
  };
  const TimelineWindow w{number(spec.substr(0, colon)), number(spec.substr(colon + 1))};
  if (!(w.start_us >= 0) || !(w.end_us > w.start_us)) throw bad();
  return w;
}

void TimelinePlot::process(int pid, const std::string& name) {
  names_[pid] = name;
}

void TimelinePlot::span(int pid, const sim::TimelineSpan& s) {
  Row& row = rows_[{s.rank, pid}];  // a rank's computation alone still gets its row
  if (s.function == 0 || row.full) return;
  const Bar bar{s.start_ns * 1e-3, (s.start_ns + s.duration_ns) * 1e-3, s.function};
  if (window_) {
    if (!window_->overlaps(bar.start_us, bar.end_us)) return;
    if (bars_ == kMostBars) {
      all_full_ = true;  // refused in write(): a picture cut short would mislead
      return;
    }
  } else if (row.bars.size() == kBarsPerRow || all_full_ || bars_ == kMostBars) {
    row.full = true;
    all_full_ = all_full_ || bars_ == kMostBars;
    return;
  }
  row.bars.push_back(bar);
  ++bars_;
}

void TimelinePlot::message(int pid, const sim::TimelineMessage& m) {
  if (arrows_overflow_) return;
  const Arrow a{pid, m.from, m.to, m.sent_ns * 1e-3, m.received_ns * 1e-3};
  if (window_ && !window_->overlaps(a.sent_us, a.received_us)) return;
  if (!window_) {
    // Past its sender's first kBarsPerRow calls a message lies beyond the picture.
    const auto row = rows_.find({m.from, pid});
    if (all_full_ || (row != rows_.end() && row->second.full)) return;
  }
  if (arrows_.size() == kArrowsKept) {
    arrows_overflow_ = true;
    arrows_.clear();
    arrows_.shrink_to_fit();
    return;
  }
  arrows_.push_back(a);
}

TimelineWindow TimelinePlot::drawn() const {
  if (window_) return *window_;
  double end = 0, full_end = std::numeric_limits<double>::infinity();
  for (const auto& [key, row] : rows_) {
    if (row.bars.empty()) continue;
    end = std::max(end, row.bars.back().end_us);
    if (row.full || all_full_) full_end = std::min(full_end, row.bars.back().end_us);
  }
  return {0, std::min(end, full_end)};
}

void TimelinePlot::write(const std::filesystem::path& output, const std::string& title) const {
  const TimelineWindow w = drawn();
  const auto inside = [&w](const Bar& b) { return w.overlaps(b.start_us, b.end_us); };
  // Functions by their time in the picture: the eight largest get a colour each.
  std::map<std::uint32_t, double> time_of;
  std::size_t bars = 0;
  for (const auto& [key, row] : rows_) {
    for (const Bar& b : row.bars) {
      if (!inside(b)) continue;
      ++bars;
      time_of[b.function] += std::min(b.end_us, w.end_us) - std::max(b.start_us, w.start_us);
    }
  }
  if (window_ && all_full_) {
    throw InputError("timeline_window",
                     fmt::format("more than {} MPI calls lie in {:.6g}-{:.6g} us; a narrower "
                                 "window draws them",
                                 kMostBars, w.start_us, w.end_us));
  }
  if (bars == 0 || !(w.end_us > w.start_us)) {
    if (!window_) throw InputError("timeline_plot", "the replay made no MPI call to draw");
    throw InputError(
        "timeline_window",
        fmt::format("no MPI call of any rank lies in {:.6g}-{:.6g} us", w.start_us, w.end_us));
  }
  std::vector<std::pair<double, std::uint32_t>> ranked;
  for (const auto& [f, t] : time_of)
    ranked.emplace_back(-t, f);
  std::sort(ranked.begin(), ranked.end());
  static constexpr const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                             "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  constexpr std::size_t kNamed = std::size(kColours);
  std::map<std::uint32_t, std::size_t> group;  // function -> colour index; kNamed: the rest
  for (std::size_t i = 0; i < ranked.size(); ++i)
    group[ranked[i].second] = std::min(i, kNamed);
  const std::size_t groups = std::min(ranked.size(), kNamed + 1);

  // Rows from the top: rank 0's runs first, the measured one (pid 0) above the predictions.
  std::map<std::pair<std::uint32_t, int>, double> y_of;
  const double rows = static_cast<double>(rows_.size());
  std::string ytics;
  for (const auto& [key, row] : rows_) {
    const double y = rows - 1 - static_cast<double>(y_of.size());
    y_of[key] = y;
    const auto name = names_.find(key.second);
    ytics += fmt::format("{}{} {}", ytics.empty() ? "" : ", ",
                         gnuplot_string(fmt::format(
                             "rank {}, {}", key.first,
                             name == names_.end() ? std::to_string(key.second) : name->second)),
                         y);
  }
  std::vector<std::string> data(groups);
  for (const auto& [key, row] : rows_) {
    const double y = y_of.at(key);
    for (const Bar& b : row.bars) {
      if (!inside(b)) continue;
      const double lo = std::max(b.start_us, w.start_us), hi = std::min(b.end_us, w.end_us);
      data[group.at(b.function)] += fmt::format("{:.6f} {} {:.6f} {:.6f} {} {}\n", (lo + hi) / 2, y,
                                                lo, hi, y - 0.35, y + 0.35);
    }
  }
  std::string arrows;
  std::size_t drawn_arrows = 0;
  for (const Arrow& a : arrows_) {
    if (!w.overlaps(a.sent_us, a.received_us)) continue;
    const auto from = y_of.find({a.from, a.pid}), to = y_of.find({a.to, a.pid});
    if (from == y_of.end() || to == y_of.end()) continue;
    ++drawn_arrows;
    arrows += fmt::format("{:.6f} {} {:.6f} {}\n", a.sent_us, from->second,
                          a.received_us - a.sent_us, to->second - from->second);
  }
  std::string note;
  if (!window_ && (all_full_ || std::any_of(rows_.begin(), rows_.end(),
                                            [](const auto& r) { return r.second.full; }))) {
    note +=
        all_full_
            ? fmt::format("; the first {} calls of all rows (a window shows later ones)", kMostBars)
            : fmt::format("; each row's first {} calls (a window shows later ones)", kBarsPerRow);
  }
  const bool draw_arrows = !arrows_overflow_ && drawn_arrows <= kMostArrows;
  if (!draw_arrows) note += "; too many messages to draw as arrows (a narrower window draws them)";

  std::vector<std::pair<std::string, std::string>> files;
  std::string script = fmt::format(
      "set title {}\nset xlabel {}\nset xrange [{:.6f}:{:.6f}]\nset yrange [-0.7:{}]\n"
      "set ytics ({}) nomirror\nset grid xtics\nset key outside right top\n"
      "set style fill solid 1.0 noborder\nplot ",
      gnuplot_string(title),
      gnuplot_string(fmt::format("time from the end of MPI_Init (us){}", note)), w.start_us,
      w.end_us, rows - 0.3, ytics);
  std::string sep;
  for (std::size_t g = 0; g < groups; ++g) {
    if (data[g].empty()) continue;
    const std::string file = fmt::format("calls-{}.dat", g);
    files.emplace_back(file, data[g]);
    const std::string label =
        g < kNamed ? std::string(trace::function_name(ranked[g].second)) : "other MPI calls";
    script += fmt::format("{}'{}' u 1:2:3:4:5:6 w boxxyerror lc rgb '{}' title {}", sep, file,
                          g < kNamed ? kColours[g] : "#999999", gnuplot_string(label));
    sep = ", ";
  }
  if (draw_arrows && !arrows.empty()) {
    files.emplace_back("messages.dat", arrows);
    script += sep +
              "'messages.dat' u 1:2:3:4 w vectors head size screen 0.006,20 filled lw 0.6 lc "
              "rgb 'black' title 'messages (replay)'";
  }
  // A bar per row of 40 pixels, between 450 and 2000 pixels in all.
  const int height = std::clamp(static_cast<int>(160 + 40 * rows), 450, 2000);
  run_gnuplot(output, script, files, {1400, height}, "timeline_plot");
}

}  // namespace commgauge::report
