#include "stats/tables.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_map>

namespace commgauge::stats {

double nice_bin_width(double lower, double upper, int bins) {
  const double raw = (upper - lower) / std::max(bins, 1);
  if (!(raw > 0) || !std::isfinite(raw)) return 1.0;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double step : {1.0, 2.0, 5.0, 10.0}) {
    if (step * decade >= raw) return step * decade;
  }
  return 10.0 * decade;
}

Distribution distribution(std::span<const double> samples, double bin_width, int max_bins) {
  if (samples.empty()) throw std::invalid_argument("distribution of no samples");
  if (!(bin_width > 0)) throw std::invalid_argument("bin width must be positive");
  if (max_bins < 1) throw std::invalid_argument("at least one bin is needed");
  const auto [lo_it, hi_it] = std::minmax_element(samples.begin(), samples.end());
  const double start = std::floor(*lo_it / bin_width) * bin_width;
  const double span_bins = std::floor((*hi_it - start) / bin_width) + 1;
  const auto nbins = static_cast<std::size_t>(std::min<double>(span_bins, max_bins));

  Distribution d;
  d.bin_width = bin_width;
  d.bins.resize(nbins);
  for (std::size_t i = 0; i < nbins; ++i) {
    d.bins[i].lower = start + static_cast<double>(i) * bin_width;
    d.bins[i].upper = start + static_cast<double>(i + 1) * bin_width;
  }
  if (span_bins > max_bins) d.bins.back().upper = std::numeric_limits<double>::infinity();
  for (double x : samples) {
    const double index = std::floor((x - start) / bin_width);
    const auto i = static_cast<std::size_t>(std::clamp(index, 0.0, static_cast<double>(nbins - 1)));
    ++d.bins[i].count;
  }
  return d;
}

Frequency frequency(std::span<const double> samples, double quantum, int max_rows) {
  if (!(quantum > 0)) throw std::invalid_argument("frequency quantum must be positive");
  if (max_rows < 1) throw std::invalid_argument("at least one frequency row is needed");
  // Timer and latency samples take few distinct values: count in a hash map, sort the keys.
  std::unordered_map<std::int64_t, std::uint64_t> counts;
  for (double x : samples)
    ++counts[std::llround(x / quantum)];
  std::vector<std::pair<std::int64_t, std::uint64_t>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end());

  Frequency f;
  f.quantum = quantum;
  for (const auto& [key, count] : sorted) {
    const double value = static_cast<double>(key) * quantum;
    if (f.rows.size() < static_cast<std::size_t>(max_rows)) {
      f.rows.push_back({value, count});
    } else {
      if (f.rest_distinct == 0) f.rest_from = value;
      ++f.rest_distinct;
      f.rest_count += count;
    }
  }
  return f;
}

}  // namespace commgauge::stats
