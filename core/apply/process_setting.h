// Choices that one process cannot measure next to the others (issue 33): settings a library
// reads once per process, so each is measured by rank processes of its own, started with the
// setting's environment, which measure the backend's default choice and report it under the
// setting's name. NCCL 2.28.9 reads its network transport's settings that way (NCCL_PARAM
// caches the first read: src/include/param.h:19-28; choice_spec.h lists them), and
// ncclConfig_t carries none of them. Pure C++: the worker and its tests without a GPU read
// the rule the same way.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/plan/choice.h"

namespace ccltune::apply {

// Test-only host choices (CCLTUNE_ENABLE_TEST_CHOICES=1) that exercise the process-level
// path without a GPU: `test-env` starts its processes with CCLTUNE_TEST_ADDED_OP_SECONDS=1
// (their host ring reports every op 1 s slower, so its figure can only come from them);
// `test-env-bad` with CCLTUNE_PEER_MEMORY=bogus (its processes refuse to start, so the
// setting fails and the job goes on).
inline constexpr const char* kTestAddedOpSecondsEnv = "CCLTUNE_TEST_ADDED_OP_SECONDS";

struct ProcessSetting {
  std::vector<std::pair<std::string, std::string>> env;  // added to the rank processes'
  std::string measured_as;  // the choice those processes measure: the backend's default
};

// The setting `choice` stands for on `backend`; none when the choice runs in the normal rank
// processes (or is not a valid name: its skip reason says so elsewhere).
std::optional<ProcessSetting> ProcessSettingOf(const core::ChoiceName& choice,
                                               const std::string& backend);

}  // namespace ccltune::apply
