#pragma once
// Comparing timings whose noise only ever adds time (a descheduled process, an interrupt): the
// low end of a sample is what the measured operation costs, and whether one sample's low end
// lies above another's is a question about how often the other sample reaches that far.

#include <cstddef>
#include <vector>

namespace commgauge::stats {

/// The rank of the low order statistic floor_of uses for n values: n / 10 (0-based), the least
/// of fewer than 10, about the 10th percentile of more.
std::size_t floor_rank(std::size_t n);

/// The value at floor_rank(values.size()) of the sorted values. Throws std::invalid_argument
/// when empty.
double floor_of(std::vector<double> values);

/// One-sided test that `above` costs more than `below` when noise only adds time: the chance
/// that a sample drawn like `below` puts as many values at or above floor_of(above) as `above`
/// does (all but floor_rank of them). Each value of `below` reaches that far with probability
/// (hits + 0.5) / (n + 1) (a half-count continuity correction: no count makes it 0 or 1); the
/// answer is the binomial upper tail. Small: `above` is shifted up. Throws when either is
/// empty.
double floor_shift_p_value(const std::vector<double>& below, const std::vector<double>& above);

}  // namespace commgauge::stats
