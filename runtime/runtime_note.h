// The runtime's own lines on stderr: init's summary, the rare warning later, and each
// in-program trial's verdict. CCLTUNE_LOG=quiet silences them. Never carries a secret: Redis
// URLs are not printed.
#pragma once

#include <string>

namespace ccltune::runtime {

void Note(const std::string& line);

}  // namespace ccltune::runtime
