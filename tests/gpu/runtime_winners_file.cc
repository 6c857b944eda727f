// runtime_winners_file WORLD FILE: writes the runtime test's winners (runtime_winners.h) for
// WORLD ranks, for programs that need a results file sending libccltune down every path
// (the libccltune-nccl device checks, with CCLTUNE_FINGERPRINT=runtime-gpu-test).
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "tests/gpu/runtime_winners.h"

int main(int argc, char** argv) {
  if (argc != 3 || std::atoi(argv[1]) < 1) {
    std::fprintf(stderr, "usage: runtime_winners_file WORLD FILE\n");
    return 2;
  }
  std::ofstream out(argv[2]);
  out << ccltune::testing::RuntimeTestResults(std::atoi(argv[1]));
  out.close();
  if (!out) {
    std::fprintf(stderr, "runtime_winners_file: cannot write %s\n", argv[2]);
    return 1;
  }
  std::printf("fingerprint %s\n", ccltune::testing::kRuntimeTestFingerprint);
  return 0;
}
