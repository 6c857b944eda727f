// runtime_winners_file WORLD FILE [hier]: writes the runtime test's winners (runtime_winners.h)
// for WORLD ranks, for programs that need a results file sending libccltune down every path
// (the libccltune-nccl device checks, with CCLTUNE_FINGERPRINT=runtime-gpu-test); `hier`:
// the hierarchical all-reduce's winners instead (HierTestResults, for ranks on 2 nodes x 2).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/gpu/runtime_winners.h"

int main(int argc, char** argv) {
  const bool hier = argc == 4 && std::string(argv[3]) == "hier";
  if ((argc != 3 && !hier) || std::atoi(argv[1]) < 1) {
    std::fprintf(stderr, "usage: runtime_winners_file WORLD FILE [hier]\n");
    return 2;
  }
  const int world = std::atoi(argv[1]);
  std::ofstream out(argv[2]);
  out << (hier ? ccltune::testing::HierTestResults(world)
               : ccltune::testing::RuntimeTestResults(world));
  out.close();
  if (!out) {
    std::fprintf(stderr, "runtime_winners_file: cannot write %s\n", argv[2]);
    return 1;
  }
  std::printf("fingerprint %s\n", ccltune::testing::kRuntimeTestFingerprint);
  return 0;
}
