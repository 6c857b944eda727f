// Logging: spdlog behind three functions so the rest of the code does not depend on it.
// Thread-safe. Never log secrets (Redis passwords, tokens).
#pragma once

#include <string>

namespace ccltune::core {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

// `prefix` goes in front of every line, e.g. "rank 2"; level from CCLTUNE_LOG_LEVEL too.
void InitLogging(const std::string& prefix, LogLevel level = LogLevel::kInfo);
void Log(LogLevel level, const std::string& message);
inline void LogInfo(const std::string& m) { Log(LogLevel::kInfo, m); }
inline void LogWarn(const std::string& m) { Log(LogLevel::kWarn, m); }
inline void LogError(const std::string& m) { Log(LogLevel::kError, m); }
inline void LogDebug(const std::string& m) { Log(LogLevel::kDebug, m); }

}  // namespace ccltune::core
