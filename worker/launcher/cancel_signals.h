// SIGINT, SIGTERM and SIGHUP as a request to cancel (docs/design.md §9): while a CancelSignals
// lives, those signals only set a flag that the launcher's loop reads, so it can mark the job
// cancelled, stop its ranks and its private Redis, and exit within a bound. The previous
// handlers come back on destruction. One at a time per process.
#pragma once

#include <csignal>
#include <string>

namespace ccltune::worker {

class CancelSignals {
 public:
  CancelSignals();
  ~CancelSignals();
  CancelSignals(const CancelSignals&) = delete;
  CancelSignals& operator=(const CancelSignals&) = delete;

  // The first signal received (0: none yet).
  int received() const;
  // "SIGTERM", "SIGINT", "SIGHUP".
  static std::string Name(int sig);

 private:
  struct sigaction old_[3];
};

}  // namespace ccltune::worker
