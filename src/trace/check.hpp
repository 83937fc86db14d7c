#pragma once
// trace-check: is a trace whole and consistent? All ranks present and readable, every rank
// finished, every point-to-point send matched by a receive under MPI's matching rules
// (communicator, source, tag, order), sizes that agree, every request completed, collectives
// called alike by every member of their communicator, communicator ids and member lists that
// agree; a receive that ends before its send starts (after clock mapping), and a call that
// starts before the previous call of its thread ended, are warnings.
//
// The ranks are read together, merged by time on rank 0's clock, so memory grows with ranks
// and with messages, requests and collectives in flight, not with the trace's length.

#include <cstdint>
#include <string>
#include <vector>

#include "trace/reader.hpp"

namespace commgauge::trace {

struct CheckIssue {
  enum class Severity { error, warning };
  Severity severity = Severity::error;
  std::int64_t rank = -1;   ///< -1: the trace as a whole
  std::int64_t event = -1;  ///< event number within the rank, -1 if none
  std::string message;
};

struct CheckResult {
  std::vector<CheckIssue> issues;  ///< the first `max_issues`
  std::uint64_t errors = 0;
  std::uint64_t warnings = 0;
  std::uint64_t events = 0;
  std::uint64_t messages_matched = 0;
  std::uint64_t requests_completed = 0;
  std::uint64_t collectives_checked = 0;
  std::uint64_t communicators = 0;
  bool ok() const { return errors == 0; }
};

CheckResult check_trace(const TraceReader& trace, std::size_t max_issues = 50);

/// What trace-check prints for a result: a line per listed issue ("rank 3 event 17: error:
/// ..."), "... and N more" when not all are listed, then its summary line. simulate and
/// trace-export print the same when they refuse a trace (the boundary is one check).
std::string check_report(const CheckResult& result, std::uint32_t ranks);

}  // namespace commgauge::trace
