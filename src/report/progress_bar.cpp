#include "report/progress_bar.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

namespace commgauge::report {

TerminalProgress::TerminalProgress() : enabled_(isatty(STDERR_FILENO) != 0) {}

void TerminalProgress::update(std::string_view label, double fraction) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  drawn_ = true;
  if (fraction < 0) {
    std::fprintf(stderr, "\r%-60.60s", std::string(label).c_str());
    std::fflush(stderr);
    return;
  }
  const double f = std::clamp(fraction, 0.0, 1.0);
  const int filled = static_cast<int>(f * 30);
  std::fprintf(stderr, "\r%-24.24s [%s%s] %5.1f%%", std::string(label).c_str(),
               std::string(static_cast<std::size_t>(filled), '#').c_str(),
               std::string(static_cast<std::size_t>(30 - filled), '.').c_str(), 100 * f);
  std::fflush(stderr);
}

void TerminalProgress::done() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\r%70s\r", "");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace commgauge::report
