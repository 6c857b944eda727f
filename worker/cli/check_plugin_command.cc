// `ccltune check-plugin [PATH]`: loads the NCCL tuner plugin as NCCL does (dlopen with
// RTLD_NOW, then the exported ncclTunerPlugin_v5 / _v4 structs by name). NCCL treats a plugin
// that fails to load as absent and quietly tunes by itself, so a missing shared library in an
// application's image would go unnoticed; this says so at once, in the image that will run it.
// It only loads: init needs a communicator. PATH defaults to the plugin beside this ccltune:
// <prefix>/lib/ when installed, <build>/plugin/ in a build tree (own_library.h).
#include <dlfcn.h>

#include <cstdio>
#include <memory>
#include <string>

#include "core/apply/tuner_abi.h"
#include "worker/cli/commands.h"
#include "worker/cli/own_library.h"

namespace ccltune::worker::cli {
namespace {

const OwnLibrary kPlugin{"libnccl-tuner-ccltune.so", "plugin"};

// The `name` member opens both ABI structs; NULL when the symbol is missing.
const char* PluginName(void* handle, const char* symbol) {
  const auto* plugin = static_cast<const apply::abi::TunerV5*>(dlsym(handle, symbol));
  return plugin == nullptr ? nullptr : plugin->name;
}

int RunCheckPlugin(std::string path) {
  auto loaded =
      LoadOwnLibrary(std::move(path), kPlugin, "pass the plugin's path: ccltune check-plugin PATH");
  if (!loaded.ok()) {
    std::fprintf(stderr, "ccltune check-plugin: %s\n", loaded.status().message().c_str());
    return 1;
  }
  path = loaded->path;
  void* handle = loaded->handle;
  const char* v5 = PluginName(handle, "ncclTunerPlugin_v5");
  const char* v4 = PluginName(handle, "ncclTunerPlugin_v4");
  if (v5 == nullptr || v4 == nullptr) {
    std::fprintf(stderr, "ccltune check-plugin: %s exports no %s\n", path.c_str(),
                 v5 == nullptr ? "ncclTunerPlugin_v5" : "ncclTunerPlugin_v4");
    return 1;
  }
  std::printf("%s: loaded; ncclTunerPlugin_v5 \"%s\", ncclTunerPlugin_v4 \"%s\"\n", path.c_str(),
              v5, v4);
  return 0;
}

}  // namespace

Runner AddCheckPluginCommand(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* c = app.add_subcommand(
      "check-plugin", "Load the NCCL tuner plugin as NCCL does and report what it exports");
  c->add_option("path", *path,
                "Plugin shared object (default: the one beside this ccltune, <prefix>/lib/ "
                "installed or <build>/plugin/)");
  return [path] { return RunCheckPlugin(*path); };
}

}  // namespace ccltune::worker::cli
