// `ccltune check-nccl [LIBRARY] [--world N] [--nodes M]`: loads libccltune-nccl as a program
// would and prints what it found: the real NCCL behind it and how, the versions, whether it
// would serve calls, this process's node and what NCCL will group it by, and for a
// communicator of N ranks (default: the GPUs visible) over M nodes (default 1; NCCL counts
// distinct NCCL_HOSTIDs) the fingerprint it would compute, how many winners it would load,
// the network settings it would set before NCCL's first init, and what each tuned size runs. A
// preloaded library that quietly forwards everything looks like one that works; this says which, in
// the image that will run it. LIBRARY defaults to the one beside this ccltune: <prefix>/lib/
// when installed, <build>/runtime/ in a build tree (own_library.h).
#include <dlfcn.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "worker/cli/commands.h"
#include "worker/cli/own_library.h"

namespace ccltune::worker::cli {
namespace {

const OwnLibrary kShim{"libccltune-nccl.so", "runtime"};
using ReportFn = size_t (*)(int, int, char*, size_t);
constexpr const char* kReportSymbol = "ccltuneNcclShimReport";
constexpr int kMaxApplyLines = 64;

std::string Field(const nlohmann::json& j, const char* key, const std::string& otherwise = "") {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : otherwise;
}

// The tune's fastest choice for any buffer (docs/design.md §4 anyBuffer): where it is not
// what runs, the difference is this process's (peer memory, NCCL's settings), not the
// buffers'. Older records have none.
std::string AnyBufferNote(const nlohmann::json& row) {
  if (!row.contains("anyBuffer") || !row["anyBuffer"].is_object()) return "";
  const auto& a = row["anyBuffer"];
  char speedup[32];
  std::snprintf(speedup, sizeof speedup, "%.2fx", a.value("speedupVsDefault", 0.0));
  return "; tuned for any buffer: " + Field(a, "choice") + " " + speedup;
}

// What a captured all-reduce runs on the program's registered tensors (direct mode,
// docs/winners.md), where that is not what plain buffers run.
std::string DirectNote(const nlohmann::json& row) {
  const std::string direct = Field(row, "runsDirect");
  return direct.empty() ? "" : "; captured, on registered tensors: " + direct;
}

// The network settings set before NCCL's first init, then per tuned size what runs.
void PrintApplied(const nlohmann::json& j) {
  if (j.contains("networkSettings") && j["networkSettings"].is_object()) {
    std::printf("network settings before NCCL's first init: %s\n",
                Field(j["networkSettings"], "text").c_str());
  }
  if (!j.contains("apply") || !j["apply"].is_array()) return;
  const auto& rows = j["apply"];
  std::printf("will apply (application buffers): %zu tuned sizes\n", rows.size());
  int shown = 0;
  for (const auto& r : rows) {
    if (++shown > kMaxApplyLines) {
      std::printf("  ... %zu more\n", rows.size() - kMaxApplyLines);
      break;
    }
    const std::string winner = Field(r, "winner"), runs = Field(r, "runs");
    std::printf("  %s %s/%s %llu: %s%s%s%s\n", Field(r, "op").c_str(), Field(r, "dtype").c_str(),
                Field(r, "redop").c_str(), r.value("bytes", 0ULL), runs.c_str(),
                runs == winner ? "" : (" (" + Field(r, "why") + ")").c_str(),
                AnyBufferNote(r).c_str(), DirectNote(r).c_str());
  }
}

void Print(const std::string& path, const nlohmann::json& j) {
  const auto& real = j["real"];
  std::printf("%s: built against NCCL %s\n", path.c_str(), Field(j, "builtAgainst").c_str());
  if (real.value("found", false)) {
    std::printf("real NCCL: %s (version code %d, found by %s)\n",
                real.value("path", std::string()).c_str(), real.value("version", 0),
                real.value("how", std::string()).c_str());
  } else {
    std::printf("real NCCL: not found\n");
  }
  // servingProblem: why not (no CUDA device, CCLTUNE_NCCL off, the real NCCL's problem).
  const std::string why = Field(j, "servingProblem", Field(j, "problem"));
  std::printf("serving calls: %s%s\n", j.value("serving", false) ? "yes" : "no",
              why.empty() ? "" : (" (" + why + ")").c_str());
  if (j.contains("modes") && j["modes"].is_object()) {
    for (const auto& [mode, how] : j["modes"].items()) {
      std::printf("mode %s: %s\n", mode.c_str(),
                  how.is_string() ? how.get<std::string>().c_str() : "?");
    }
  }
  if (j.contains("node") && j["node"].is_object()) {
    const auto& node = j["node"];
    std::printf("node: %s; %s\n",
                node.contains("name")
                    ? (Field(node, "name") + " (from " + Field(node, "source") + ")").c_str()
                    : ("not usable: " + Field(node, "problem")).c_str(),
                Field(node, "ncclGroupsBy").c_str());
  }
  std::printf("winners source: %s\n", Field(j, "source", "none").c_str());
  const int world = j.value("world", 0);
  if (world <= 0) {
    std::printf("fingerprint: not computed (no GPU visible; pass --world N)\n");
    return;
  }
  const int nodes = j.value("nodes", 1);
  const std::string shape = std::to_string(world) + (world == 1 ? " rank, " : " ranks, ") +
                            std::to_string(nodes) + (nodes == 1 ? " node" : " nodes");
  if (j.contains("fingerprint")) {
    std::printf("fingerprint (%s): %s\n", shape.c_str(), Field(j, "fingerprint").c_str());
  } else {
    std::printf("fingerprint (%s): not computed: %s\n", shape.c_str(),
                Field(j, "fingerprintProblem").c_str());
  }
  if (j.contains("winners")) {
    const std::string first = Field(j, "firstRejection");
    std::printf("winners: %d records for %d ranks (%d rejected%s)\n", j.value("winners", 0), world,
                j.value("rejected", 0), first.empty() ? "" : (", the first: " + first).c_str());
    if (j.contains("fingerprintGap"))
      std::printf("  nothing tuned for this fingerprint: %s\n", Field(j, "fingerprintGap").c_str());
  } else if (j.contains("winnersProblem")) {
    std::printf("winners: none loaded: %s\n", Field(j, "winnersProblem").c_str());
  }
  PrintApplied(j);
}

int RunCheckNccl(std::string path, int world, int nodes) {
  auto loaded =
      LoadOwnLibrary(std::move(path), kShim, "pass the library's path: ccltune check-nccl LIBRARY");
  if (!loaded.ok()) {
    std::fprintf(stderr, "ccltune check-nccl: %s\n", loaded.status().message().c_str());
    return 1;
  }
  path = loaded->path;
  void* handle = loaded->handle;
  auto info = reinterpret_cast<ReportFn>(dlsym(handle, kReportSymbol));
  if (info == nullptr && dlsym(handle, "ccltuneNcclShimInfo") != nullptr) {
    std::fprintf(stderr,
                 "ccltune check-nccl: %s is an older libccltune-nccl (ccltuneNcclShimInfo, no "
                 "node count): use the one built with this ccltune\n",
                 path.c_str());
    return 1;
  }
  if (info == nullptr || dlsym(handle, "ncclAllReduce") == nullptr) {
    std::fprintf(stderr, "ccltune check-nccl: %s is not libccltune-nccl (no %s)\n", path.c_str(),
                 info == nullptr ? kReportSymbol : "ncclAllReduce");
    return 1;
  }
  std::vector<char> buf(info(world, nodes, nullptr, 0));
  if (buf.empty() || info(world, nodes, buf.data(), buf.size()) != 0) {
    std::fprintf(stderr, "ccltune check-nccl: %s gave no report\n", path.c_str());
    return 1;
  }
  const nlohmann::json j = nlohmann::json::parse(buf.data(), nullptr, false);
  if (j.is_discarded() || !j.contains("real")) {
    std::fprintf(stderr, "ccltune check-nccl: %s gave an unreadable report\n", path.c_str());
    return 1;
  }
  Print(path, j);
  return j["real"].value("found", false) ? 0 : 1;
}

}  // namespace

Runner AddCheckNcclCommand(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto world = std::make_shared<int>(0);
  auto nodes = std::make_shared<int>(1);
  auto* c = app.add_subcommand(
      "check-nccl",
      "Load libccltune-nccl as a program would and report the NCCL and winners it finds");
  c->add_option("library", *path,
                "libccltune-nccl shared object (default: the one beside this ccltune, "
                "<prefix>/lib/ installed or <build>/runtime/)");
  c->add_option("--world", *world, "Ranks of the communicator to fingerprint (default: GPUs)")
      ->check(CLI::Range(1, 4096));
  c->add_option("--nodes", *nodes,
                "Nodes the communicator spans, as NCCL counts them (distinct NCCL_HOSTID, set "
                "from CCLTUNE_NODE_NAME; else host names)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  return [path, world, nodes] { return RunCheckNccl(*path, *world, *nodes); };
}

}  // namespace ccltune::worker::cli
