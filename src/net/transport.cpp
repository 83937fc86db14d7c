#include "net/transport.hpp"

#include "common/error.hpp"

namespace commgauge::net {

std::string to_string(Role r) {
  return r == Role::source ? "source" : "dest";
}

Request Transport::irecv_into_send_buffer(std::size_t bytes) {
  (void)bytes;
  throw TransportError(kind() + " transport: no receive into the send buffer");
}

void spin_for(const Clock& clock, double us) {
  if (!(us > 0)) return;
  const double end = clock.now_us() + us;
  while (clock.now_us() < end) {
  }
}

}  // namespace commgauge::net
