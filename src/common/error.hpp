#pragma once
// The error types that reach the user. Each is printed once, at the top level of the CLI,
// followed by a non-zero exit.

#include <stdexcept>
#include <string>

namespace commgauge {

/// Bad user input: a command-line value, a parameter file, a scheme, a trace.
/// `where` is "file:line" or "file: /json/pointer" or an option name; it prefixes the message.
/// Below the CLI, `where` names an option by its name in the options' structure (min_rounds,
/// placement): the CLI shows it as its flag (--min-rounds) when the command has one.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
  InputError(const std::string& where, const std::string& message)
      : std::runtime_error(where + ": " + message), where_(where), detail_(message) {}
  const std::string& where() const { return where_; }    ///< empty if none was given
  const std::string& detail() const { return detail_; }  ///< the message without `where`

 private:
  std::string where_, detail_;
};

/// A time that does not fit the simulator's clock (integer picoseconds): a message so large, or a
/// link so slow, that its cost or the simulated time would pass the range the clock holds.
/// The trace may be well-formed; it is the prediction that cannot be represented.
class TimeRangeError : public InputError {
 public:
  using InputError::InputError;
};

/// A result that could not be written although its path was good: the disk filled, a sync or a
/// rename failed. A runtime failure (exit 1), not bad input.
class OutputError : public std::runtime_error {
 public:
  OutputError(const std::string& path, const std::string& message)
      : std::runtime_error(path + ": " + message) {}
};

/// A communication failure: unreachable or dead peer, timeout, protocol violation.
class TransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace commgauge
