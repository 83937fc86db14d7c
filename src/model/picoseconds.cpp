#include "model/picoseconds.hpp"

#include <ostream>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge::model {

void Picoseconds::overflow(const char* op, rep a, rep b) {
  throw TimeRangeError(fmt::format(
      "a time of {} ps {} {} passes the range of the simulated clock (2^63 ps, about 106 days)", a,
      op, b));
}

std::ostream& operator<<(std::ostream& os, Picoseconds t) {
  return os << t.count() << " ps";
}

}  // namespace commgauge::model
