// TempDir: a fresh directory under $TMPDIR (or /tmp), removed with everything in it when the
// object goes away. Throws std::runtime_error if it cannot be created (tests only).
#pragma once

#include <filesystem>
#include <string>

namespace ccltune::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& tag = "ccltune");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // path() / name, as a string: convenient for files inside.
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace ccltune::testing
