#pragma once
// Statistics of a stream of samples without holding them: exact count, min, max, mean and
// variance (Welford), and counts of the values rounded to a quantum, from which the median,
// quantiles and seed 002's distribution and frequency tables follow. Timer differences take few
// distinct values (a clock ticks in nanoseconds), so 2^24 of them fit in a few kilobytes; small
// values are counted in a flat array, the rest in a map.

#include <cstdint>
#include <map>
#include <vector>

#include "stats/descriptive.hpp"
#include "stats/tables.hpp"

namespace commgauge::stats {

class Histogram {
 public:
  /// `quantum` > 0: values are counted rounded to it; values up to `flat_limit` quanta go to
  /// the flat array. 4096 quanta are 4.1 us at the timer's 1 ns, far above its differences
  /// (tens of ns) yet 32 KiB: 65,536 (512 KiB) lifted each latency rank above its 20 MiB target.
  explicit Histogram(double quantum, std::int64_t flat_limit = 1 << 12);

  void add(double x);
  std::uint64_t count() const { return count_; }
  double quantum() const { return quantum_; }

  /// Seed 002's statistics; the median is that of the rounded values (exact to the quantum),
  /// the rest exact. Throws std::invalid_argument when empty.
  Summary summary() const;
  /// The q-quantile (0..1) of the rounded values (nearest rank). Throws when empty.
  double quantile(double q) const;
  /// Smallest value above zero and smallest non-negative value (rounded); 0 if there is none.
  double min_positive() const;
  double min_non_negative() const;
  std::uint64_t negative() const { return negative_; }

  Distribution distribution(double bin_width, int max_bins) const;
  Frequency frequency(int max_rows) const;

 private:
  // Every (rounded value, count), ascending.
  std::vector<std::pair<double, std::uint64_t>> counts() const;

  double quantum_;
  std::int64_t flat_limit_;
  std::vector<std::uint64_t> flat_;  // index: rounded value in quanta, 0 .. flat_limit
  std::map<std::int64_t, std::uint64_t> other_;
  std::uint64_t count_ = 0, negative_ = 0;
  double min_ = 0, max_ = 0, mean_ = 0, m2_ = 0;
};

}  // namespace commgauge::stats
