// runtime_note.h
#include "runtime/runtime_note.h"

#include <cstdio>
#include <cstdlib>

namespace ccltune::runtime {

void Note(const std::string& line) {
  const char* quiet = std::getenv("CCLTUNE_LOG");
  if (quiet != nullptr && std::string(quiet) == "quiet") return;
  std::fprintf(stderr, "ccltune: %s\n", line.c_str());
}

}  // namespace ccltune::runtime
