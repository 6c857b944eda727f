// Sets environment variables for one test and restores the previous values after; the
// plugin reads its settings at each init, as a fresh process would. The plugin's variables
// and NCCL_MIN_CTAS are unset first, so the caller's environment cannot leak in.
#pragma once

#include <cstdlib>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>

namespace ccltune::testing {

class ScopedEnv {
 public:
  // A list, not a map: {{"K", "V"}} would also read as a map built from two iterators.
  explicit ScopedEnv(std::initializer_list<std::pair<const char*, std::string>> vars) {
    for (const char* name : {"CCLTUNE_REDIS_URL", "CCLTUNE_RESULTS_FILE", "CCLTUNE_PLUGIN_DTYPE",
                             "CCLTUNE_PLUGIN_TIMEOUT_MS", "CCLTUNE_FINGERPRINT", "NCCL_MIN_CTAS"}) {
      Save(name);
      unsetenv(name);
    }
    for (const auto& [k, v] : vars) {
      Save(k);
      setenv(k, v.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [k, v] : saved_) {
      if (v)
        setenv(k.c_str(), v->c_str(), 1);
      else
        unsetenv(k.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void Save(const std::string& k) {
    if (saved_.count(k)) return;
    const char* v = std::getenv(k.c_str());
    saved_[k] = v ? std::optional<std::string>(v) : std::nullopt;
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

}  // namespace ccltune::testing
