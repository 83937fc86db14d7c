#include "sim/simulator.hpp"
// The replay's public face: options (--noise), results, and simulate(). The engine is in parts,
// listed in sim/engine.hpp.

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "common/error.hpp"
#include "sim/engine.hpp"

namespace commgauge::sim {

Noise parse_noise(const std::string& text) {
  auto bad = [&text]() {
    return InputError("noise", "'" + text +
                                   "': expected exponential:MEAN_US or "
                                   "exponential:MEAN_US:SEED (MEAN_US > 0)");
  };
  const std::string kind = "exponential:";
  if (text.rfind(kind, 0) != 0) throw bad();
  const std::string rest = text.substr(kind.size());
  const std::size_t colon = rest.find(':');
  Noise noise;
  try {
    std::size_t used = 0;
    const std::string mean = rest.substr(0, colon);
    noise.mean_us = std::stod(mean, &used);
    if (used != mean.size() || !(noise.mean_us > 0) || !std::isfinite(noise.mean_us)) throw bad();
    if (colon != std::string::npos) {
      const std::string seed = rest.substr(colon + 1);
      if (seed.empty() || seed.find_first_not_of("0123456789") != std::string::npos) throw bad();
      noise.seed = std::stoull(seed);
    }
  } catch (const std::logic_error&) {  // stod, stoull: not a number, out of range
    throw bad();
  }
  return noise;
}

namespace {
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

model::Picoseconds noise_ps(const Noise& noise, std::uint32_t rank, std::uint64_t record) {
  const std::uint64_t bits =
      splitmix64(splitmix64(noise.seed ^ (std::uint64_t{rank} << 32)) ^ splitmix64(record));
  const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
  return model::checked_picoseconds(-noise.mean_us * 1e6 * std::log1p(-u), "a drawn noise");
}

Breakdown& Breakdown::operator+=(const Breakdown& o) {
  compute += o.compute;
  overhead += o.overhead;
  transfer += o.transfer;
  late_sender += o.late_sender;
  late_receiver += o.late_receiver;
  synchronization += o.synchronization;
  opaque += o.opaque;
  return *this;
}

Result simulate(const trace::TraceReader& trace, const Network& network, const Options& options) {
  detail::Engine engine(trace, network, options);
  return engine.run();
}

}  // namespace commgauge::sim
