// `ccltune check-plugin` and `ccltune check-nccl` without a path (issue 42): they find the
// tuner plugin and libccltune-nccl beside the binary that runs, in a build tree (where ctest
// runs them: <build>/plugin/, <build>/runtime/) and in the installed layout of the image
// (<prefix>/bin/ccltune, <prefix>/lib/); where neither holds the file, one error names the
// paths tried and the argument to pass. And check-nccl says calls are not served without a
// CUDA device (this machine's CI has none; CUDA_VISIBLE_DEVICES='' hides any), with why.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "tests/integration/ccltune_process.h"
#include "tests/support/temp_dir.h"

namespace ccltune::testing {
namespace {

namespace fs = std::filesystem;

// Set by tests/integration/CMakeLists.txt: where the build tree writes the two libraries.
const fs::path kPlugin = fs::canonical(CCLTUNE_TEST_PLUGIN_PATH);
const fs::path kShim = fs::canonical(CCLTUNE_TEST_SHIM_PATH);

// A hard link when the temp dir shares the build's file system (the binary is large), else
// a copy: either way /proc/self/exe of the child names `to`.
void Place(const fs::path& from, const fs::path& to) {
  fs::create_directories(to.parent_path());
  std::error_code ec;
  fs::create_hard_link(from, to, ec);
  if (ec) fs::copy_file(from, to);
}

// <prefix>/bin/ccltune, and with `libraries` the two files under <prefix>/lib/, as
// `cmake --install` (manifests/image/stage-build.sh) lays them out.
fs::path InstallLayout(const TempDir& dir, bool libraries) {
  const fs::path prefix = dir.path() / "usr-local";
  Place(CcltuneBin(), prefix / "bin" / "ccltune");
  if (libraries) {
    Place(kPlugin, prefix / "lib" / kPlugin.filename());
    Place(kShim, prefix / "lib" / kShim.filename());
  }
  return prefix;
}

bool Has(const RunResult& r, const std::string& text) {
  return r.output.find(text) != std::string::npos;
}

TEST(OwnLibraries, CheckPluginLoadsThePluginOfTheBuildTree) {
  auto r = RunCcltune({"check-plugin"}, {}, 60);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(
      Has(r, kPlugin.string() +
                 ": loaded; ncclTunerPlugin_v5 \"ccltune\", ncclTunerPlugin_v4 \"ccltune\""))
      << r.output;
}

// Past loading: the shim answered its report. Whether the real NCCL is found (exit 0) depends
// on the machine's loader path, not on where the shim was found.
TEST(OwnLibraries, CheckNcclLoadsTheShimOfTheBuildTree) {
  auto r = RunCcltune({"check-nccl", "--world", "2"}, {}, 60);
  EXPECT_FALSE(Has(r, "cannot load")) << r.output;
  EXPECT_TRUE(Has(r, kShim.string() + ": built against NCCL ")) << r.output;
  EXPECT_TRUE(Has(r, "\nreal NCCL: ")) << r.output;
}

TEST(OwnLibraries, BothLoadFromPrefixLibWhenInstalled) {
  TempDir dir("ccltune-installed");
  const fs::path prefix = InstallLayout(dir, true);
  const std::string bin = (prefix / "bin" / "ccltune").string();
  auto r = RunBinary(bin, {"check-plugin"}, {}, 60);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(Has(r, (prefix / "lib" / kPlugin.filename()).string() + ": loaded;")) << r.output;
  r = RunBinary(bin, {"check-nccl", "--world", "2"}, {}, 60);
  EXPECT_TRUE(Has(r, (prefix / "lib" / kShim.filename()).string() + ": built against NCCL "))
      << r.output;
}

TEST(OwnLibraries, NoneBesideTheBinaryNamesThePathsTriedAndTheArgument) {
  TempDir dir("ccltune-alone");
  const fs::path prefix = InstallLayout(dir, false);
  const std::string bin = (prefix / "bin" / "ccltune").string();
  struct Case {
    const char* command;
    fs::path file;
    const char* build_folder;
    const char* argument;
  };
  for (const Case& c : {Case{"check-plugin", kPlugin.filename(), "plugin", "PATH"},
                        Case{"check-nccl", kShim.filename(), "runtime", "LIBRARY"}}) {
    auto r = RunBinary(bin, {c.command}, {}, 60);
    EXPECT_EQ(r.code, 1) << r.output;
    const std::string expected = "ccltune " + std::string(c.command) + ": " + c.file.string() +
                                 " is not beside " + bin + " (tried " +
                                 (prefix / "lib" / c.file).string() + ", " +
                                 (prefix / c.build_folder / c.file).string() + "); ";
    EXPECT_TRUE(Has(r, expected)) << r.output;
    EXPECT_TRUE(Has(r, "ccltune " + std::string(c.command) + " " + c.argument)) << r.output;
    EXPECT_FALSE(Has(r, "cannot load")) << r.output;
  }
}

// Without a device the winners cannot run (every communicator's context fails and each call
// goes to NCCL): "serving calls: yes" would be false. The reason names the device or driver.
TEST(OwnLibraries, CheckNcclDoesNotServeWithoutACudaDevice) {
  auto r = RunCcltune({"check-nccl", "--world", "2"}, {{"CUDA_VISIBLE_DEVICES", ""}}, 60);
  EXPECT_TRUE(Has(r, "\nserving calls: no (no CUDA device")) << r.output;
  EXPECT_FALSE(Has(r, "serving calls: yes")) << r.output;
}

}  // namespace
}  // namespace ccltune::testing
