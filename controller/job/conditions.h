// metav1.Condition handling for the job's status (docs/design.md §6 types: Validated,
// PodsScheduled, Rendezvoused, Benchmarking, Complete, Failed). lastTransitionTime only moves when
// the condition's status flips, as `kubectl wait` and humans expect.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "controller/kube/time_util.h"

namespace ccltune::controller {

void SetCondition(nlohmann::json& status, const std::string& type, bool value,
                  const std::string& reason, const std::string& message, long long generation,
                  Clock::time_point now);
// Null when absent.
const nlohmann::json* FindCondition(const nlohmann::json& status, const std::string& type);
bool ConditionTrue(const nlohmann::json& status, const std::string& type);
bool IsFinished(const nlohmann::json& status);  // phase Succeeded or Failed

// Marks the job finished with phase Failed, condition Failed=True and completionTime.
void MarkFailed(nlohmann::json& status, const std::string& reason, const std::string& message,
                long long generation, Clock::time_point now);

}  // namespace ccltune::controller
