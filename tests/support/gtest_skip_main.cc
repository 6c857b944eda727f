// main() for the gtest binaries that ctest runs (tests/CMakeLists.txt, ccltune_add_gtest).
//
// gtest exits 0 when a case skips (GTEST_SKIP: no GPU, a tool not installed), so ctest would
// report a test that did not run as Passed. Under ctest (CCLTUNE_SKIP_EXIT_CODE set, with the
// test's SKIP_RETURN_CODE) a run in which nothing failed and some case skipped exits with that
// code instead, and ctest reports it Skipped. A failure still exits non-zero as a failure, and
// run by hand (GPU scripts, a developer) the binary exits as gtest's own main would.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  if (rc != 0) return rc;
  const char* skip_code = std::getenv("CCLTUNE_SKIP_EXIT_CODE");
  if (skip_code == nullptr || *skip_code == '\0') return 0;
  const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
  if (unit.skipped_test_count() == 0) return 0;
  return std::stoi(skip_code);
}
