#pragma once
// Comparing timings whose noise only ever adds time (a descheduled process, an interrupt, a
// busy hypervisor): the low end of a sample is what the measured operation costs, and whether
// one sample's low end lies above another's is a question of how many of the other's values
// come before it.

#include <cstddef>
#include <vector>

namespace commgauge::stats {

/// The rank of the low order statistic floor_of uses for n values: n / 10 (0-based), the least
/// of fewer than 10, about the 10th percentile of more.
std::size_t floor_rank(std::size_t n);

/// The value at floor_rank(values.size()) of the sorted values. Throws std::invalid_argument
/// when empty.
double floor_of(std::vector<double> values);

/// The exact precedence test (Nelson, "Tables for a precedence life test", Technometrics 5(4),
/// 1963) that `above` lies above `below`: with r = floor_rank(n_above) + 1, the chance that at
/// least as many of `below`'s values come before the r-th smallest of `above` as here, if both
/// were drawn alike. Distribution-free: when the two were measured alternately in a random
/// order, load that varies in time falls on both alike and the test keeps its level; P(K = k) =
/// C(k + r - 1, k) C(n_below - k + n_above - r, n_below - k) / C(n_below + n_above, n_below).
/// A value of `below` equal to the order statistic does not count as before it. Small: `above`
/// is shifted up. Throws std::invalid_argument when either is empty.
double precedence_p_value(const std::vector<double>& below, const std::vector<double>& above);

}  // namespace commgauge::stats
