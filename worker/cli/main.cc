// `ccltune`: tune (a whole local job), worker (one rank, what pods run), results (read the
// shared cache), export (winners for the NCCL tuner plugins), report (an HTML page),
// check-plugin (load the NCCL tuner plugin as NCCL would), check-nccl (load libccltune-nccl
// as a program would).
// Bad flags: one line naming the problem, exit code 2 (no command: one line pointing to
// --help). `--version`: "ccltune <project version>".
#include <cstdio>

#include "worker/cli/commands.h"
#include "worker/rank/termination_message.h"

namespace ccltune::worker::cli {

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ccltune: error: %s\n", message.c_str());
  // In a pod this line becomes the container's termination message (the job's Failed reason).
  WriteTerminationMessage("ccltune: error: " + message);
  return 2;
}
}  // namespace ccltune::worker::cli

int main(int argc, char** argv) {
  namespace cli = ccltune::worker::cli;
  CLI::App app{"ccltune: autotune collective communication and share the winners"};
  app.require_subcommand(0, 1);  // none: one line pointing to --help (below), not CLI11's
  // CCLTUNE_VERSION is the CMake project version, the one records carry as toolVersion.
  app.set_version_flag("--version", std::string("ccltune ") + CCLTUNE_VERSION,
                       "Print the version and exit");
  std::vector<std::pair<CLI::App*, cli::Runner>> commands;
  for (auto add :
       {cli::AddTuneCommand, cli::AddWorkerCommand, cli::AddResultsCommand, cli::AddExportCommand,
        cli::AddReportCommand, cli::AddCheckPluginCommand, cli::AddCheckNcclCommand}) {
    const std::size_t before = app.get_subcommands({}).size();
    auto runner = add(app);
    commands.emplace_back(app.get_subcommands({}).at(before), runner);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {  // a ParseError too: caught before that branch
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string help = "ccltune --help";
    for (auto& [sub, runner] : commands)
      if (sub->parsed()) help = "ccltune " + sub->get_name() + " --help";
    return cli::UsageError(std::string(e.what()) + " (`" + help + "` lists the flags)");
  }
  for (auto& [sub, runner] : commands)
    if (sub->parsed()) return runner();
  return cli::UsageError(
      "no command given: one of tune, worker, results, export, report, check-plugin, "
      "check-nccl (`ccltune --help` lists them, `ccltune tune --help` a command's flags)");
}
