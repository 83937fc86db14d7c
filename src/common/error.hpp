#pragma once
// The error types that reach the user. Each is printed once, at the top level of the CLI,
// followed by a non-zero exit.

#include <stdexcept>
#include <string>

namespace commgauge {

/// Bad user input: a command-line value, a parameter file, a scheme, a trace.
/// `where` is "file:line" or "file: /json/pointer" or an option name; it prefixes the message.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
  InputError(const std::string& where, const std::string& message)
      : std::runtime_error(where + ": " + message) {}
};

/// A time that does not fit the simulator's clock (integer picoseconds): a message so large, or a
/// link so slow, that its cost or the simulated time would pass the range the clock holds.
/// The trace may be well-formed; it is the prediction that cannot be represented.
class TimeRangeError : public InputError {
 public:
  using InputError::InputError;
};

/// A communication failure: unreachable or dead peer, timeout, protocol violation.
class TransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace commgauge
