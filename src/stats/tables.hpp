#pragma once
// The distribution and frequency tables of seed 002 (Appendices A and B).

#include <cstdint>
#include <span>
#include <vector>

namespace commgauge::stats {

/// Counts of samples in equal-width bins [lower, lower + width), the last one open-ended.
struct Distribution {
  struct Bin {
    double lower = 0;
    double upper = 0;  ///< +infinity for the open-ended last bin
    std::uint64_t count = 0;
  };
  double bin_width = 0;
  std::vector<Bin> bins;
};

/// Distinct values (after rounding to `quantum`) with their frequency, ascending by value.
/// Past `max_rows` the remaining values are summarised in `rest_*` rather than listed, so a
/// nanosecond clock cannot produce millions of rows.
struct Frequency {
  struct Row {
    double value = 0;
    std::uint64_t count = 0;
  };
  double quantum = 0;
  std::vector<Row> rows;
  std::uint64_t rest_distinct = 0;  ///< distinct values not listed
  std::uint64_t rest_count = 0;     ///< samples with those values
  double rest_from = 0;             ///< smallest value not listed
};

/// A 1-2-5 bin width such that `bins` bins cover [lower, upper]; 1 if the range is empty.
double nice_bin_width(double lower, double upper, int bins);

/// Bins start at a multiple of `bin_width` at or below the minimum and stop at the maximum or
/// after `max_bins` bins, the last of which then holds everything above.
/// Throws std::invalid_argument on empty input, bin_width <= 0 or max_bins < 1.
Distribution distribution(std::span<const double> samples, double bin_width, int max_bins);

/// Throws std::invalid_argument on quantum <= 0 or max_rows < 1. Empty input gives no rows.
Frequency frequency(std::span<const double> samples, double quantum, int max_rows);

}  // namespace commgauge::stats
