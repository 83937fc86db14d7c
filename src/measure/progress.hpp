#pragma once
// How a long-running method tells the user how far it is (the report layer draws it).

#include <string_view>

namespace commgauge::measure {

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  /// `fraction` of the work labelled `label` is done (0..1; below 0: not known, the label says
  /// how far).
  virtual void update(std::string_view label, double fraction) = 0;
  virtual void done() = 0;
};

}  // namespace commgauge::measure
