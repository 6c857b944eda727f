// What libccltune-nccl exports (with its version script): NCCL's names and its report
// function, compiled with hidden visibility otherwise.
#pragma once

#define CCLTUNE_SHIM_EXPORT extern "C" __attribute__((visibility("default")))
