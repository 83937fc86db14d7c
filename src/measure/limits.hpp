#pragma once
// Bounds on the values that size a measurement's work, so that no flag can make a run endless
// or its memory unbounded (stated in each flag's --help).

namespace commgauge::measure {

inline constexpr int kMaxBins = 10000;                 ///< distribution bins (timer, latency)
inline constexpr double kMaxPointsPerOctave = 64;      ///< geometric sweeps (loggp, overlap)
inline constexpr double kMaxComputation_us = 1e8;      ///< overlap's computation C (100 s)
inline constexpr int kMaxFrequencyRows = 100000;       ///< rows of a frequency table (timer)
inline constexpr double kMaxDelay_us = 1e6;            ///< loggp's busy delay d (1 s)
inline constexpr double kMinBinWidth_us = 1e-6;        ///< a distribution's bin (a picosecond)
inline constexpr unsigned long long kMaxNpp = 100000;  ///< ping-pongs per timed loop (latency)
inline constexpr double kMaxResNpp = 1e6;              ///< latency's res_npp

}  // namespace commgauge::measure
