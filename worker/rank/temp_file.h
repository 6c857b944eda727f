// Where a rank writes a file of its own that outlives no job (NCCL's INFO log, a process
// setting's rank output): the system's temporary directory (/tmp when it has none).
#pragma once

#include <string>

namespace ccltune::worker {

// The temporary directory's path of `name`, whose '/', ':' and '%' become '_': a job id
// names no directory, and NCCL expands %h and %p in NCCL_DEBUG_FILE.
std::string TempFilePath(std::string name);

}  // namespace ccltune::worker
