// Logging through one spdlog stderr logger. CCLTUNE_LOG_LEVEL (debug|info|warn|error)
// overrides the level passed in, so a user can turn on debug output without new flags.
#include "core/base/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <mutex>

namespace ccltune::core {
namespace {

std::mutex g_mu;  // guards creating/replacing the logger
std::shared_ptr<spdlog::logger> g_logger;

spdlog::level::level_enum ToSpd(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

bool LevelFromEnv(LogLevel* level) {
  const char* v = std::getenv("CCLTUNE_LOG_LEVEL");
  if (v == nullptr) return false;
  const std::string s(v);
  if (s == "debug")
    *level = LogLevel::kDebug;
  else if (s == "info")
    *level = LogLevel::kInfo;
  else if (s == "warn")
    *level = LogLevel::kWarn;
  else if (s == "error")
    *level = LogLevel::kError;
  else
    return false;
  return true;
}

std::shared_ptr<spdlog::logger> MakeLogger(const std::string& prefix, LogLevel level) {
  auto logger = std::make_shared<spdlog::logger>(
      "ccltune", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  std::string pattern = "%Y-%m-%dT%H:%M:%S.%e %^%l%$ ";
  if (!prefix.empty()) pattern += "[" + prefix + "] ";
  logger->set_pattern(pattern + "%v");
  logger->set_level(ToSpd(level));
  return logger;
}

std::shared_ptr<spdlog::logger> Logger() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_logger == nullptr) {
    LogLevel level = LogLevel::kInfo;
    LevelFromEnv(&level);
    g_logger = MakeLogger("", level);
  }
  return g_logger;
}

}  // namespace

void InitLogging(const std::string& prefix, LogLevel level) {
  const bool bad_env = std::getenv("CCLTUNE_LOG_LEVEL") != nullptr && !LevelFromEnv(&level);
  auto logger = MakeLogger(prefix, level);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_logger = logger;
  }
  if (bad_env) {
    logger->warn("CCLTUNE_LOG_LEVEL='{}' ignored (allowed: debug, info, warn, error)",
                 std::getenv("CCLTUNE_LOG_LEVEL"));
  }
}

void Log(LogLevel level, const std::string& message) { Logger()->log(ToSpd(level), message); }

}  // namespace ccltune::core
