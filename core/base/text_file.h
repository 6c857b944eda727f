// Reading a whole user-named file (a plan, a records file) with the reason when it cannot be
// read: the OS's own words (No such file or directory, Permission denied, Is a directory).
#pragma once

#include <cstddef>
#include <string>

#include "core/base/status.h"

namespace ccltune::core {

// Blocks on the file's reads only. NotFound for a missing file, FailedPrecondition for any
// other reason (a directory, no permission) or one over `max_bytes` (a plan is small; a device
// such as /dev/zero would never end): "cannot read /x/plan.yaml: No such file or directory".
Result<std::string> ReadTextFile(const std::string& path, std::size_t max_bytes);

}  // namespace ccltune::core
