#pragma once
// The temporaries a run has created and not yet renamed or removed (result files written aside,
// a trace recorded into a staging directory): removed when the process is ended by SIGINT or
// SIGTERM, so that an interrupted run leaves nothing behind (red-team, 2026-12-05: an interrupted
// synth left a 958 MB temporary, trace-export 1902 of them).

#include <string>

namespace commgauge {

/// Records `path` (a file, or with `directory` a directory and what it holds) as a temporary of
/// this run. Called before the path is created, so that no signal falls between the two.
void register_temporary(const std::string& path, bool directory = false);
/// The temporary was renamed or removed: no longer ours to remove.
void forget_temporary(const std::string& path);

/// Installs handlers for SIGINT and SIGTERM that remove every registered temporary and then end
/// the process by the same signal (its exit status stays "killed by SIGINT/SIGTERM"). The removal
/// runs on a thread of its own, not in the handler: the handler only wakes it. A process forked
/// from this one ends at once on the signal (its parent owns the temporaries). Call once, early.
void remove_temporaries_on_signals();

}  // namespace commgauge
