// Where `ccltune check-plugin` and `ccltune check-nccl` find ccltune's own shared libraries
// when no path is given: beside the running binary, in the two layouts it runs from.
//   installed (cmake --install, the container image under /usr/local): <prefix>/bin/ccltune
//     and <prefix>/lib/<file>, as the install() rules of plugin/ and runtime/ put them;
//   a build tree: <build>/worker/ccltune and <build>/<folder>/<file>, the folder the target's
//     LIBRARY_OUTPUT_DIRECTORY names (plugin/, runtime/).
// The binary is found through /proc/self/exe, so a symlink to it (on PATH) leads to its real
// place, where the libraries are.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace ccltune::worker::cli {

struct OwnLibrary {
  std::string file;          // "libnccl-tuner-ccltune.so"
  std::string build_folder;  // "plugin": where a build tree writes it
};

// The paths to try, in order, for a binary at `exe` (absolute): installed, then build tree.
std::vector<std::string> OwnLibraryCandidates(const std::filesystem::path& exe,
                                              const OwnLibrary& lib);

// The first candidate that exists for this process's binary. NotFound otherwise, naming the
// file, every path tried and `how_to_pass` (the argument that names the file instead).
core::Result<std::string> FindOwnLibrary(const OwnLibrary& lib, const std::string& how_to_pass);

struct LoadedLibrary {
  std::string path;
  void* handle = nullptr;  // kept loaded until exit, as NCCL keeps its plugins
};

// Loads `path`, or the library FindOwnLibrary finds when `path` is empty, as NCCL does
// (dlopen, RTLD_NOW | RTLD_LOCAL). The error says which file could not be found or loaded.
core::Result<LoadedLibrary> LoadOwnLibrary(std::string path, const OwnLibrary& lib,
                                           const std::string& how_to_pass);

}  // namespace ccltune::worker::cli
