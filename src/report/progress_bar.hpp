#pragma once
// Progress on stderr for long runs, drawn only when stderr is a terminal.

#include <chrono>
#include <string>

#include "measure/progress.hpp"

namespace commgauge::report {

class TerminalProgress final : public measure::ProgressSink {
 public:
  TerminalProgress();
  void update(std::string_view label, double fraction) override;
  void done() override;
  bool enabled() const { return enabled_; }

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace commgauge::report
