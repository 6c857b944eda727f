// ReadTextFile (text_file.h).
#include "core/base/text_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/base/sizes.h"
#include "core/base/unique_fd.h"

namespace ccltune::core {
namespace {

Status OsError(const std::string& path, int err) {
  std::string text = "cannot read " + path + ": " + std::strerror(err);
  return err == ENOENT ? NotFound(std::move(text)) : FailedPrecondition(std::move(text));
}

}  // namespace

Result<std::string> ReadTextFile(const std::string& path, std::size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return OsError(path, errno);
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return OsError(path, errno);  // EISDIR for a directory
    if (n == 0) return text;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {
      return FailedPrecondition("cannot read " + path + ": larger than " + FormatSize(max_bytes) +
                                " (the cap on such a file)");
    }
  }
}

}  // namespace ccltune::core
