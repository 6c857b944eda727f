#include "controller/job/conditions.h"

namespace ccltune::controller {

using Json = nlohmann::json;

void SetCondition(Json& status, const std::string& type, bool value, const std::string& reason,
                  const std::string& message, long long generation, Clock::time_point now) {
  if (!status.contains("conditions") || !status["conditions"].is_array()) {
    status["conditions"] = Json::array();
  }
  const std::string s = value ? "True" : "False";
  for (Json& c : status["conditions"]) {
    if (c.value("type", "") != type) continue;
    if (c.value("status", "") != s) c["lastTransitionTime"] = FormatTime(now);
    c["status"] = s;
    c["reason"] = reason;
    c["message"] = message;
    c["observedGeneration"] = generation;
    return;
  }
  status["conditions"].push_back({{"type", type},
                                  {"status", s},
                                  {"reason", reason},
                                  {"message", message},
                                  {"lastTransitionTime", FormatTime(now)},
                                  {"observedGeneration", generation}});
}

const Json* FindCondition(const Json& status, const std::string& type) {
  if (!status.contains("conditions")) return nullptr;
  for (const Json& c : status["conditions"]) {
    if (c.value("type", "") == type) return &c;
  }
  return nullptr;
}

bool ConditionTrue(const Json& status, const std::string& type) {
  const Json* c = FindCondition(status, type);
  return c && c->value("status", "") == "True";
}

bool IsFinished(const Json& status) {
  std::string phase = status.value("phase", "");
  return phase == "Succeeded" || phase == "Failed";
}

void MarkFailed(Json& status, const std::string& reason, const std::string& message,
                long long generation, Clock::time_point now) {
  status["phase"] = "Failed";
  status["completionTime"] = FormatTime(now);
  SetCondition(status, "Failed", true, reason, message, generation, now);
  SetCondition(status, "Complete", false, reason, "the job failed", generation, now);
}

}  // namespace ccltune::controller
