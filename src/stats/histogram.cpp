#include "stats/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace commgauge::stats {

Histogram::Histogram(double quantum, std::int64_t flat_limit)
    : quantum_(quantum), flat_limit_(flat_limit) {
  if (!(quantum > 0)) throw std::invalid_argument("histogram quantum must be positive");
  flat_.assign(static_cast<std::size_t>(std::max<std::int64_t>(flat_limit, 0)) + 1, 0);
}

void Histogram::add(double x) {
  ++count_;
  if (count_ == 1) {
    min_ = max_ = x;
  } else {
    min_ = std::min(min_, x);
    max_ = std::max(max_, x);
  }
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (x - mean_);
  if (x < 0) ++negative_;
  const std::int64_t key = std::llround(x / quantum_);
  if (key >= 0 && key <= flat_limit_) {
    ++flat_[static_cast<std::size_t>(key)];
  } else {
    ++other_[key];
  }
}

std::vector<std::pair<double, std::uint64_t>> Histogram::counts() const {
  std::vector<std::pair<double, std::uint64_t>> out;
  auto it = other_.begin();
  for (; it != other_.end() && it->first < 0; ++it)
    out.emplace_back(static_cast<double>(it->first) * quantum_, it->second);
  for (std::size_t k = 0; k < flat_.size(); ++k) {
    if (flat_[k] != 0) out.emplace_back(static_cast<double>(k) * quantum_, flat_[k]);
  }
  for (; it != other_.end(); ++it)
    out.emplace_back(static_cast<double>(it->first) * quantum_, it->second);
  return out;
}

double Histogram::quantile(double q) const {
  if (count_ == 0) throw std::invalid_argument("quantile of no samples");
  const auto target = static_cast<std::uint64_t>(
      std::max(1.0, std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  for (const auto& [value, n] : counts()) {
    seen += n;
    if (seen >= target) return value;
  }
  return max_;
}

Summary Histogram::summary() const {
  if (count_ == 0) throw std::invalid_argument("summary of no samples");
  Summary s;
  s.count = count_;
  s.min = min_;
  s.max = max_;
  s.mean = mean_;
  // The median of the rounded values: the middle one, or the mean of the two middle ones.
  const auto c = counts();
  auto nth = [&](std::uint64_t index) {  // 0-based
    std::uint64_t seen = 0;
    for (const auto& [value, n] : c) {
      seen += n;
      if (seen > index) return value;
    }
    return max_;
  };
  s.median = count_ % 2 == 1 ? nth(count_ / 2) : (nth(count_ / 2 - 1) + nth(count_ / 2)) / 2;
  if (count_ < 2) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    s.variance = s.sd = s.cv_percent = s.se = s.rse = nan;
    return s;
  }
  s.variance = m2_ / static_cast<double>(count_ - 1);
  s.sd = std::sqrt(s.variance);
  s.cv_percent = 100 * s.sd / s.mean;
  s.se = s.sd / std::sqrt(static_cast<double>(count_));
  s.rse = s.se / s.mean;
  return s;
}

double Histogram::min_positive() const {
  for (const auto& [value, n] : counts()) {
    if (value > 0) return value;
  }
  return 0;
}

double Histogram::min_non_negative() const {
  for (const auto& [value, n] : counts()) {
    if (value >= 0) return value;
  }
  return 0;
}

Distribution Histogram::distribution(double bin_width, int max_bins) const {
  if (count_ == 0) throw std::invalid_argument("distribution of no samples");
  if (!(bin_width > 0)) throw std::invalid_argument("bin width must be positive");
  if (max_bins < 1) throw std::invalid_argument("at least one bin is needed");
  // As stats::distribution, on the rounded values.
  const double start = std::floor(min_ / bin_width) * bin_width;
  const double span_bins = std::floor((max_ - start) / bin_width) + 1;
  const auto nbins = static_cast<std::size_t>(std::min<double>(span_bins, max_bins));
  Distribution d;
  d.bin_width = bin_width;
  d.bins.resize(nbins);
  for (std::size_t i = 0; i < nbins; ++i) {
    d.bins[i].lower = start + static_cast<double>(i) * bin_width;
    d.bins[i].upper = start + static_cast<double>(i + 1) * bin_width;
  }
  if (span_bins > max_bins) d.bins.back().upper = std::numeric_limits<double>::infinity();
  for (const auto& [value, n] : counts()) {
    const double index = std::floor((value - start) / bin_width);
    const auto i = static_cast<std::size_t>(std::clamp(index, 0.0, static_cast<double>(nbins - 1)));
    d.bins[i].count += n;
  }
  return d;
}

Frequency Histogram::frequency(int max_rows) const {
  if (max_rows < 1) throw std::invalid_argument("at least one frequency row is needed");
  Frequency f;
  f.quantum = quantum_;
  for (const auto& [value, n] : counts()) {
    if (f.rows.size() < static_cast<std::size_t>(max_rows)) {
      f.rows.push_back({value, n});
    } else {
      if (f.rest_distinct == 0) f.rest_from = value;
      ++f.rest_distinct;
      f.rest_count += n;
    }
  }
  return f;
}

}  // namespace commgauge::stats
