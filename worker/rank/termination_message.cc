#include "worker/rank/termination_message.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace ccltune::worker {
namespace {

constexpr const char* kEnv = "CCLTUNE_TERMINATION_LOG";
constexpr const char* kKubeletPath = "/dev/termination-log";

// O_NONBLOCK: opening a FIFO with no reader fails at once instead of waiting for one.
int OpenTarget() {
  const char* env = std::getenv(kEnv);
  if (env != nullptr && *env != '\0') {
    return open(env, O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
  }
  // Never created here: outside a container the kubelet's file does not exist.
  if (access(kKubeletPath, W_OK) != 0) return -1;
  return open(kKubeletPath, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
}

}  // namespace

void WriteTerminationMessage(std::string_view line) noexcept {
  const int saved_errno = errno;
  int fd = OpenTarget();
  if (fd >= 0) {
    struct stat st {};
    // Only a regular, still empty file: the first failure of the container names the cause.
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
      std::string_view out = line.substr(0, kTerminationMessageMaxBytes);
      while (!out.empty()) {
        ssize_t n = write(fd, out.data(), out.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.remove_prefix(static_cast<std::size_t>(n));
      }
    }
    close(fd);
  }
  errno = saved_errno;
}

}  // namespace ccltune::worker
