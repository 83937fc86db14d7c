#include "net/transport.hpp"

namespace commgauge::net {

std::string to_string(Role r) {
  return r == Role::source ? "source" : "dest";
}

void spin_for(const Clock& clock, double us) {
  if (!(us > 0)) return;
  const double end = clock.now_us() + us;
  while (clock.now_us() < end) {
  }
}

}  // namespace commgauge::net
