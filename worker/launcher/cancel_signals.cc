#include "worker/launcher/cancel_signals.h"

#include <atomic>
#include <cstring>

namespace ccltune::worker {
namespace {

constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
// Lock-free, so the handler may store to it (async-signal-safe).
std::atomic<int> g_received{0};
static_assert(std::atomic<int>::is_always_lock_free);

void OnSignal(int sig) {
  int none = 0;
  g_received.compare_exchange_strong(none, sig);
}

}  // namespace

CancelSignals::CancelSignals() {
  g_received = 0;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // blocking calls resume; the loop polls the flag
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &old_[i]);
}

CancelSignals::~CancelSignals() {
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &old_[i], nullptr);
}

int CancelSignals::received() const { return g_received.load(); }

std::string CancelSignals::Name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(sig);
  }
}

}  // namespace ccltune::worker
