#pragma once
// --timeline-plot: the measured and the predicted run as a picture (gnuplot), for a look where
// no browser opens --timeline's JSON: a row per rank and run, each MPI call a bar coloured by
// function, the replay's messages as arrows. It keeps only what it may draw, at most kMostBars
// calls in all: those inside the window, or without one each row's first kBarsPerRow (the
// picture then ends where the first full row ends).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/simulator.hpp"

namespace commgauge::report {

/// A part of the run, in microseconds from the end of MPI_Init.
struct TimelineWindow {
  double start_us = 0;
  double end_us = 0;
  /// Whether [from_us, to_us] (a call, or a message from its send to its receipt) touches it.
  bool overlaps(double from_us, double to_us) const {
    return to_us >= start_us && from_us <= end_us;
  }
};

/// "START:END" (microseconds, 0 <= START < END, finite); InputError (timeline_window) otherwise.
TimelineWindow parse_timeline_window(const std::string& spec);

class TimelinePlot {
 public:
  static constexpr std::size_t kBarsPerRow = 2000;
  /// Calls kept in all (about 40 bytes each): past it, without a window every row counts as
  /// full; with one, the picture is refused (a narrower window).
  static constexpr std::size_t kMostBars = 1'000'000;
  static constexpr std::size_t kMostArrows = 2000;    ///< more in the picture: none drawn (a note)
  static constexpr std::size_t kArrowsKept = 100000;  ///< more kept: none drawn (a note)

  explicit TimelinePlot(std::optional<TimelineWindow> window) : window_(window) {}

  /// Names run `pid` ("measured", "loggps"); rows are ordered by rank, then pid.
  void process(int pid, const std::string& name);
  void span(int pid, const sim::TimelineSpan& s);
  void message(int pid, const sim::TimelineMessage& m);

  /// Draws the picture (.png or .svg); InputError (timeline_window) if no call lies in the
  /// window or more than kMostBars do, (timeline_plot) if gnuplot fails.
  void write(const std::filesystem::path& output, const std::string& title) const;

 private:
  struct Bar {
    double start_us = 0, end_us = 0;
    std::uint32_t function = 0;
  };
  struct Row {
    std::vector<Bar> bars;
    bool full = false;  ///< kBarsPerRow kept without a window: later calls dropped
  };
  struct Arrow {
    int pid = 0;
    std::uint32_t from = 0, to = 0;
    double sent_us = 0, received_us = 0;
  };
  /// The part drawn: the window given, else from 0 to where the first full row's bars end (or
  /// the last bar's end).
  TimelineWindow drawn() const;

  std::optional<TimelineWindow> window_;
  std::map<std::pair<std::uint32_t, int>, Row> rows_;  ///< (rank, pid)
  std::map<int, std::string> names_;
  std::size_t bars_ = 0;       ///< kept, over all rows
  bool all_full_ = false;      ///< kMostBars kept: no row takes more
  std::vector<Arrow> arrows_;  ///< those in the window (without one: from rows not yet full)
  bool arrows_overflow_ = false;
};

}  // namespace commgauge::report
