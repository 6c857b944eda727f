// The subcommands of the `ccltune` binary (docs/design.md §9). Each registers its flags on the
// CLI11 app and returns the function that runs it (exit code).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "core/redis/redis_client.h"

namespace ccltune::worker::cli {

using Runner = std::function<int()>;

Runner AddTuneCommand(CLI::App& app);
Runner AddWorkerCommand(CLI::App& app);
Runner AddResultsCommand(CLI::App& app);
Runner AddExportCommand(CLI::App& app);
Runner AddReportCommand(CLI::App& app);
Runner AddCheckPluginCommand(CLI::App& app);
Runner AddCheckNcclCommand(CLI::App& app);

// One clear line for a bad flag or plan; exit code 2.
int UsageError(const std::string& message);

}  // namespace ccltune::worker::cli
