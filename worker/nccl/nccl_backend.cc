// NcclBackend: Backend over NCCL (nccl_backend.h). The protocol lives in the bench runner;
// this class maps its calls onto the Runtime and NcclChoice.
#include "worker/nccl/nccl_backend.h"

#include <cstdlib>
#include <cstring>

#include "core/apply/node_span.h"
#include "core/base/log.h"
#include "core/node/node_name.h"
#include "worker/nccl/choice_catalog.h"
#include "worker/nccl/gpu_names.h"
#include "worker/nccl/nccl_choice.h"
#include "worker/nccl/nccl_env.h"
#include "worker/nccl/runtime.h"

namespace ccltune::worker {
namespace {

using nccl::Runtime;

class NcclBackend final : public Backend {
 public:
  NcclBackend(int rank, int world, int device, PeerDirectory& dir, const CancelToken& cancel)
      : rt_(rank, world, device, dir, cancel), dir_(dir) {}

  core::Status Start(const core::BenchmarkSpec& bench);

  std::string name() const override { return "nccl"; }
  int rank() const override { return rt_.rank(); }
  int world_size() const override { return rt_.world(); }

  std::vector<ChoiceCandidate> Candidates(const core::Problem& problem) override {
    return nccl::BuildCandidates(problem, catalog_);
  }
  core::Result<std::unique_ptr<PreparedChoice>> Prepare(const core::Problem& problem,
                                                        const core::ChoiceName& choice,
                                                        const core::BenchmarkSpec& bench) override;
  core::Status Barrier(Deadline deadline) override;
  core::Result<std::vector<double>> AllReduceMax(const std::vector<double>& values,
                                                 Deadline deadline) override;
  core::Status Recover(int epoch, Deadline deadline) override {
    return rt_.Recover(epoch, deadline);
  }
  core::FingerprintInput FingerprintInfo() const override {
    return nccl::ProbeFingerprint(rt_.device(), rt_.world(), rt_.nccl_version());
  }

 private:
  core::Status EnsureScratch(std::size_t doubles);
  core::Status LearnNodeSpan(Deadline deadline);

  Runtime rt_;
  PeerDirectory& dir_;
  nccl::CatalogContext catalog_;
  nccl::DeviceBuffer scratch_;     // barrier word and AllReduceMax values
  nccl::MappedHost scratch_host_;  // staging for AllReduceMax
  std::size_t scratch_doubles_ = 0;
};

core::Status NcclBackend::Start(const core::BenchmarkSpec& bench) {
  nccl::TunerSetup setup = nccl::SetUpTuner();
  catalog_.tuner_problem = setup.problem;
  if (!setup.tuner) core::LogWarn("nccl:algo choices disabled: " + catalog_.tuner_problem);
  catalog_.tuner_loaded = setup.tuner.has_value();
  catalog_.world = rt_.world();
  const char* test = std::getenv("CCLTUNE_ENABLE_TEST_CHOICES");
  catalog_.test_choices = test != nullptr && std::strcmp(test, "1") == 0;
  catalog_.ib_problem = nccl::NetIbProblem();
  CCLTUNE_RETURN_IF_ERROR(
      rt_.Start(std::move(setup.tuner), DeadlineIn(bench.rendezvous_timeout_seconds)));
  catalog_.nccl_version = rt_.nccl_version();
  catalog_.peer_problem = rt_.peers()->problem();
  CCLTUNE_RETURN_IF_ERROR(LearnNodeSpan(DeadlineIn(bench.rendezvous_timeout_seconds)));
  return EnsureScratch(64);
}

// Every rank's node name (core/node/node_name.h, set up before the backend), for the catalog's
// rules across nodes; across nodes also the hierarchical all-reduce's node teams.
core::Status NcclBackend::LearnNodeSpan(Deadline deadline) {
  CCLTUNE_ASSIGN_OR_RETURN(const core::NodeName mine, core::LocalNodeName());
  CCLTUNE_ASSIGN_OR_RETURN(std::vector<std::string> names,
                           dir_.AllGather("node-name", mine.name, deadline));
  const core::NodeShape shape = core::ShapeOfNodes(names);
  catalog_.span = {shape.nodes, shape.gpus_per_node, shape.equal_groups};
  // The hierarchical all-reduce's node teams, where its span rule holds (the runtime's too).
  if (std::string why = apply::HierSpanSkipReason(catalog_.span); !why.empty()) {
    catalog_.node_peer_problem = "no node teams: " + why;
    return core::Status::Ok();
  }
  CCLTUNE_RETURN_IF_ERROR(rt_.StartNodeTeam(core::PlaceOfRank(names, rt_.rank()), deadline));
  catalog_.node_peer_problem = rt_.node_peers()->problem();
  return core::Status::Ok();
}

core::Result<std::unique_ptr<PreparedChoice>> NcclBackend::Prepare(
    const core::Problem& problem, const core::ChoiceName& choice,
    const core::BenchmarkSpec& bench) {
  const std::string reason = nccl::SkipReason(choice, problem, catalog_);
  if (!reason.empty()) return core::FailedPrecondition("skip: " + reason);
  CCLTUNE_ASSIGN_OR_RETURN(nccl::ChoiceSpec spec, nccl::SpecFromChoice(choice));
  // This process read NCCL's network settings already; the bench runner takes the figures
  // of the setting's own processes (rank/process_settings.h).
  if (spec.net.any())
    return core::Unsupported(choice.ToString() + " is measured by rank processes of its own");
  // Preparation allocates, registers and may probe: bounded like a choice.
  return nccl::NcclChoice::Create(rt_, problem, spec, bench,
                                  DeadlineIn(bench.choice_timeout_seconds));
}

core::Status NcclBackend::EnsureScratch(std::size_t doubles) {
  if (doubles <= scratch_doubles_) return core::Status::Ok();
  CCLTUNE_ASSIGN_OR_RETURN(
      scratch_, nccl::DeviceBuffer::Allocate(doubles * sizeof(double), nccl::MemoryKind::kCuda));
  CCLTUNE_ASSIGN_OR_RETURN(scratch_host_, nccl::MappedHost::Allocate(doubles * sizeof(double)));
  scratch_doubles_ = doubles;
  return core::Status::Ok();
}

core::Status NcclBackend::Barrier(Deadline deadline) {
  nccl::Communicator& comm = rt_.default_comm();
  if (comm.aborted())
    return core::FailedPrecondition("barrier: communicator aborted; Recover first");
  float* word = static_cast<float*>(scratch_.data());
  CCLTUNE_NCCL_TRY(comm.get(),
                   ncclAllReduce(word, word, 1, ncclFloat32, ncclSum, comm.get(), rt_.stream()));
  CCLTUNE_RETURN_IF_ERROR(rt_.WaitEnqueued(comm, deadline, "barrier enqueue"));
  return rt_.WaitGpu(nullptr, deadline, "barrier");
}

core::Result<std::vector<double>> NcclBackend::AllReduceMax(const std::vector<double>& values,
                                                            Deadline deadline) {
  if (values.empty()) return values;
  CCLTUNE_RETURN_IF_ERROR(EnsureScratch(values.size()));
  nccl::Communicator& comm = rt_.default_comm();
  if (comm.aborted()) return core::FailedPrecondition("max: communicator aborted; Recover first");
  const std::size_t bytes = values.size() * sizeof(double);
  std::memcpy(scratch_host_.host(), values.data(), bytes);
  CCLTUNE_CUDA_TRY(cudaMemcpyAsync(scratch_.data(), scratch_host_.host(), bytes,
                                   cudaMemcpyHostToDevice, rt_.stream()));
  CCLTUNE_NCCL_TRY(comm.get(), ncclAllReduce(scratch_.data(), scratch_.data(), values.size(),
                                             ncclFloat64, ncclMax, comm.get(), rt_.stream()));
  CCLTUNE_RETURN_IF_ERROR(rt_.WaitEnqueued(comm, deadline, "max enqueue"));
  CCLTUNE_CUDA_TRY(cudaMemcpyAsync(scratch_host_.host(), scratch_.data(), bytes,
                                   cudaMemcpyDeviceToHost, rt_.stream()));
  CCLTUNE_RETURN_IF_ERROR(rt_.WaitGpu(nullptr, deadline, "max"));
  std::vector<double> out(values.size());
  std::memcpy(out.data(), scratch_host_.host(), bytes);
  return out;
}

int CudaGpuCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

}  // namespace

bool NcclAvailable(std::string* why) {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    if (why) *why = std::string("no usable GPU: ") + cudaGetErrorString(err);
    return false;
  }
  if (n == 0 && why) *why = "0 GPUs visible";
  return n > 0;
}

core::Result<std::unique_ptr<Backend>> CreateNcclBackend(int rank, int world, int local_rank,
                                                         PeerDirectory& dir,
                                                         const CancelToken& cancel,
                                                         const core::BenchmarkSpec& bench) {
  if (world < 1 || rank < 0 || rank >= world) {
    return core::InvalidArgument("rank " + std::to_string(rank) + " of world " +
                                 std::to_string(world));
  }
  const int gpus = CudaGpuCount();
  if (local_rank < 0 || local_rank >= gpus) {
    return core::FailedPrecondition("local rank " + std::to_string(local_rank) + " but " +
                                    std::to_string(gpus) + " GPU(s) visible");
  }
  auto backend = std::make_unique<NcclBackend>(rank, world, local_rank, dir, cancel);
  CCLTUNE_RETURN_IF_ERROR(
      backend->Start(bench).WithContext("nccl backend rank " + std::to_string(rank)));
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace ccltune::worker
