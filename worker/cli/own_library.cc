// Finding ccltune's own shared libraries beside the binary (own_library.h).
#include "worker/cli/own_library.h"

#include <dlfcn.h>

#include <system_error>

namespace ccltune::worker::cli {

std::vector<std::string> OwnLibraryCandidates(const std::filesystem::path& exe,
                                              const OwnLibrary& lib) {
  const std::filesystem::path above_bin = exe.parent_path().parent_path();
  return {(above_bin / "lib" / lib.file).string(),
          (above_bin / lib.build_folder / lib.file).string()};
}

core::Result<std::string> FindOwnLibrary(const OwnLibrary& lib, const std::string& how_to_pass) {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return core::NotFound("cannot tell where " + lib.file + " is: /proc/self/exe: " + ec.message() +
                          "; " + how_to_pass);
  }
  std::string tried;
  for (const std::string& path : OwnLibraryCandidates(exe, lib)) {
    if (std::filesystem::is_regular_file(path, ec)) return path;
    tried += (tried.empty() ? "" : ", ") + path;
  }
  return core::NotFound(lib.file + " is not beside " + exe.string() + " (tried " + tried + "); " +
                        how_to_pass);
}

core::Result<LoadedLibrary> LoadOwnLibrary(std::string path, const OwnLibrary& lib,
                                           const std::string& how_to_pass) {
  if (path.empty()) {
    CCLTUNE_ASSIGN_OR_RETURN(path, FindOwnLibrary(lib, how_to_pass));
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return core::FailedPrecondition("cannot load " + path + ": " + dlerror());
  return LoadedLibrary{std::move(path), handle};
}

}  // namespace ccltune::worker::cli
