// ProcessSettingOf (process_setting.h).
#include "core/apply/process_setting.h"

#include "core/apply/choice_spec.h"
#include "core/apply/node_span.h"

namespace ccltune::apply {

std::optional<ProcessSetting> ProcessSettingOf(const core::ChoiceName& choice,
                                               const std::string& backend) {
  if (backend == "nccl" && choice.base == "nccl-net") {
    core::Result<ChoiceSpec> spec = SpecFromChoice(choice);
    if (!spec.ok()) return std::nullopt;
    return ProcessSetting{NetSettingsEnv(spec->net), core::DefaultChoice(backend)};
  }
  if (backend == "host" && choice.params.empty()) {
    if (choice.base == "test-env")
      return ProcessSetting{{{kTestAddedOpSecondsEnv, "1"}}, core::DefaultChoice(backend)};
    if (choice.base == "test-env-bad")
      return ProcessSetting{{{"CCLTUNE_PEER_MEMORY", "bogus"}}, core::DefaultChoice(backend)};
  }
  return std::nullopt;
}

}  // namespace ccltune::apply
