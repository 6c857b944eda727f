// TempFilePath (temp_file.h).
#include "worker/rank/temp_file.h"

#include <filesystem>

namespace ccltune::worker {

std::string TempFilePath(std::string name) {
  for (char& c : name)
    if (c == '/' || c == ':' || c == '%') c = '_';
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  return ((ec ? std::filesystem::path("/tmp") : dir) / name).string();
}

}  // namespace ccltune::worker
