// libccltune-nccl's log lines (shim_log.h).
#include "runtime/nccl_shim/shim_log.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace ccltune::shim {
namespace {

bool EnvIs(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

// One write(2), so lines of several threads or processes do not interleave.
void Write(const std::string& line) {
  const std::string text = "ccltune-nccl: " + line + "\n";
  (void)!::write(STDERR_FILENO, text.data(), text.size());
}

}  // namespace

void Note(const std::string& line) {
  static const bool quiet = EnvIs("CCLTUNE_LOG", "quiet");
  if (!quiet) Write(line);
}

bool DebugOn() {
  static const bool on = EnvIs("CCLTUNE_NCCL_DEBUG", "1");
  return on;
}

void Debug(const std::string& line) {
  if (DebugOn()) Write(line);
}

}  // namespace ccltune::shim
