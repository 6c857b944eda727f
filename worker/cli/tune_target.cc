// The backend and ranks of `ccltune tune` (tune_target.h).
#include "worker/cli/tune_target.h"

#include "core/base/counted.h"
#include "worker/rank/backend_factory.h"

namespace ccltune::worker::cli {
namespace {

// "spec.worldSize (job.yaml)" or "worldSize (plan.yaml)": a plan file's field, as the user
// reads it in the file.
std::string FileField(const TuneAsked& asked, const core::JobTarget& job,
                      const std::string& field) {
  return (job.from_job ? "spec." : "") + field + " (" + asked.plan_file + ")";
}

std::string GpusVisible(int gpus) {
  return gpus == 1 ? "only 1 GPU is visible" : "only " + std::to_string(gpus) + " GPUs are visible";
}

}  // namespace

core::Result<std::string> ResolveBackend(const TuneAsked& asked, const core::JobTarget& job,
                                         std::string* why_host) {
  const std::string& flag = asked.backend_flag;
  if (flag != "auto" && flag != "host" && flag != "nccl")
    return core::InvalidArgument("--backend: '" + flag + "' is not one of auto, nccl, host");
  if (flag != "auto") {
    if (flag == "nccl" && VisibleGpuCount() == 0)
      return core::InvalidArgument("--backend nccl: no GPU is visible to this process");
    return flag;
  }
  if (job.backend.empty()) return AutoBackend(why_host);
  if (job.backend == "nccl" && VisibleGpuCount() == 0) {
    return core::InvalidArgument(
        FileField(asked, job, "backend") +
        ": nccl needs a GPU, and none is visible to this process (allowed here: host; pass "
        "--backend host to tune the plan's collectives over TCP instead)");
  }
  return job.backend;
}

core::Result<int> ResolveRanks(const TuneAsked& asked, const core::JobTarget& job,
                               const std::string& backend) {
  const bool nccl = backend == "nccl";
  const int gpus = nccl ? VisibleGpuCount() : 0;
  if (asked.ranks_flag > 0) {
    if (nccl && asked.ranks_flag > gpus)
      return core::InvalidArgument("--ranks: " + core::Counted(asked.ranks_flag, "rank") + " but " +
                                   GpusVisible(gpus));
    return asked.ranks_flag;
  }
  if (job.world_size == 0) return nccl ? gpus : 4;
  const std::string field = FileField(asked, job, "worldSize");
  if (nccl && job.world_size > gpus) {
    return core::InvalidArgument(field + ": " + core::Counted(job.world_size, "rank") + " but " +
                                 GpusVisible(gpus) + " (pass --ranks " + std::to_string(gpus) +
                                 " to tune on them)");
  }
  if (job.world_size > kMaxLocalRanks) {
    return core::InvalidArgument(field + ": " + std::to_string(job.world_size) +
                                 " ranks on one machine is not allowed (at most " +
                                 std::to_string(kMaxLocalRanks) + "; pass --ranks N)");
  }
  return job.world_size;
}

core::Status CheckCudaGraph(const TuneAsked& asked, const core::Plan& plan,
                            const std::string& backend, const std::string& why_host) {
  if (backend != "host" || !plan.benchmark.cuda_graph) return core::Status::Ok();
  const std::string source =
      asked.cuda_graph_flag ? "--cuda-graph" : FileField(asked, plan.job, "benchmark.cudaGraph");
  const std::string chosen = asked.backend_flag == "host" ? "--backend host"
                             : !plan.job.backend.empty()  ? "spec.backend host"
                                                          : "auto: " + why_host;
  return core::InvalidArgument(source +
                               ": CUDA graphs need the nccl backend, and this run's backend is "
                               "host (" +
                               chosen + "); drop it to tune the host backend");
}

}  // namespace ccltune::worker::cli
