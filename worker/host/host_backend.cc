#include "worker/host/host_backend.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>

#include "core/apply/process_setting.h"
#include "worker/env_switches.h"
#include "worker/host/host_prepared_choice.h"
#include "worker/host/mesh_setup.h"

namespace ccltune::worker::host {
namespace {

bool Requested(const core::Problem& problem, const std::string& name) {
  return problem.choices.empty() ||
         std::find(problem.choices.begin(), problem.choices.end(), name) != problem.choices.end();
}

core::Status MaxOfAll(HostComm& c, const CollArgs& a) {
  const std::size_t k = a.count;
  auto* all = reinterpret_cast<std::byte*>(c.Scratch(1, k * sizeof(double) * c.world()));
  const Blocks blocks = Blocks::Uniform(k, c.world());
  std::memcpy(all + blocks.off(c.rank()) * sizeof(double), a.send, k * sizeof(double));
  CCLTUNE_RETURN_IF_ERROR(DirectAllGather(c, all, blocks, sizeof(double), 0));
  auto* out = static_cast<double*>(a.recv);
  for (int r = 0; r < c.world(); ++r) {
    const auto* v = reinterpret_cast<const double*>(all + blocks.off(r) * sizeof(double));
    for (std::size_t i = 0; i < k; ++i) out[i] = r == 0 ? v[i] : std::max(out[i], v[i]);
  }
  return core::Status::Ok();
}

}  // namespace

HostBackendOptions HostBackendOptions::FromEnv(std::string listen_host) {
  HostBackendOptions o;
  o.listen_host = std::move(listen_host);
  const char* enable = std::getenv("CCLTUNE_ENABLE_TEST_CHOICES");
  o.enable_test_choices = enable != nullptr && std::string(enable) == "1";
  if (const char* hang = std::getenv("CCLTUNE_TEST_HANG_RANK")) o.test_hang_rank = std::atoi(hang);
  const char* added = std::getenv(apply::kTestAddedOpSecondsEnv);
  if (o.enable_test_choices && added != nullptr) o.test_added_op_seconds = std::atof(added);
  if (!BufferRotationOn()) o.cache_budget_bytes = 0;  // one buffer set
  return o;
}

core::Result<std::unique_ptr<HostBackend>> HostBackend::Create(int rank, int world,
                                                               PeerDirectory& directory,
                                                               const CancelToken& cancel,
                                                               const HostBackendOptions& options,
                                                               Deadline deadline) {
  const MeshConfig config{rank, world, 0, options.listen_host};
  CCLTUNE_ASSIGN_OR_RETURN(std::unique_ptr<TcpMesh> mesh,
                           BuildTcpMesh(config, directory, cancel, deadline));
  return std::unique_ptr<HostBackend>(
      new HostBackend(rank, world, directory, cancel, options, std::move(mesh)));
}

HostBackend::HostBackend(int rank, int world, PeerDirectory& directory, const CancelToken& cancel,
                         const HostBackendOptions& options, std::unique_ptr<TcpMesh> mesh)
    : rank_(rank),
      world_(world),
      directory_(directory),
      cancel_(cancel),
      options_(options),
      hosts_(mesh->hosts()),
      comm_(std::move(mesh), world, cancel, options.test_hang_rank) {}

std::string HostBackend::SkipReason(const core::Problem& p) const {
  // Plans are validated against the backend; this keeps a plan built in code honest too.
  if (!p.epilogue.none()) return "the host backend runs no epilogues (backend nccl)";
  if (core::IsReducing(p.op) && p.redop == core::RedOp::kNone) {
    return std::string(core::OpName(p.op)) + " needs a reduceOp";
  }
  if (core::ElementCount(p.op, p.dtype, p.bytes, world_) == 0) {
    return std::string(core::OpName(p.op)) + " of " + std::to_string(p.bytes) + " bytes (" +
           core::DtypeName(p.dtype) + ") is too small for world size " + std::to_string(world_);
  }
  return "";
}

std::vector<ChoiceCandidate> HostBackend::Candidates(const core::Problem& problem) {
  std::vector<ChoiceCandidate> out;
  const std::string skip = SkipReason(problem);
  for (const Algorithm& a : Algorithms()) {
    if (a.op != problem.op || (a.test_only && !options_.enable_test_choices)) continue;
    if (!Requested(problem, a.name)) continue;
    out.push_back(ChoiceCandidate{core::ChoiceName{a.name, {}}, skip});
  }
  // A requested name this op does not have is reported, never silently dropped. Test
  // process settings are offered only by name: their processes measure the ring.
  for (const std::string& name : problem.choices) {
    const Algorithm* a = FindAlgorithm(problem.op, name);
    if (a != nullptr && (!a->test_only || options_.enable_test_choices)) continue;
    if (options_.enable_test_choices && apply::ProcessSettingOf({name, {}}, "host")) {
      out.push_back(ChoiceCandidate{core::ChoiceName{name, {}}, skip});
      continue;
    }
    out.push_back(ChoiceCandidate{
        core::ChoiceName{name, {}},
        "not a host choice for " + std::string(core::OpName(problem.op)) +
            " (allowed: " + AlgorithmNames(problem.op, options_.enable_test_choices) + ")"});
  }
  return out;
}

core::Result<std::unique_ptr<PreparedChoice>> HostBackend::Prepare(
    const core::Problem& problem, const core::ChoiceName& choice,
    const core::BenchmarkSpec& /*bench*/) {
  const Algorithm* algo = FindAlgorithm(problem.op, choice.base);
  if (algo == nullptr || (algo->test_only && !options_.enable_test_choices) ||
      !choice.params.empty()) {
    return core::InvalidArgument(
        "'" + choice.base + "' is not a host choice for " + core::OpName(problem.op) +
        " (allowed: " + AlgorithmNames(problem.op, options_.enable_test_choices) +
        "; host choices take no parameters)");
  }
  const std::string skip = SkipReason(problem);
  if (!skip.empty()) return core::FailedPrecondition(skip);
  ReduceFn reduce = nullptr;
  if (core::IsReducing(problem.op)) {
    CCLTUNE_ASSIGN_OR_RETURN(reduce, GetReduceFn(problem.dtype, problem.redop));
  }
  const std::size_t count = core::ElementCount(problem.op, problem.dtype, problem.bytes, world_);
  return std::unique_ptr<PreparedChoice>(std::make_unique<HostPreparedChoice>(
      comm_, *algo, problem, count, reduce, options_.cache_budget_bytes,
      options_.test_added_op_seconds));
}

core::Status HostBackend::Barrier(Deadline deadline) {
  const std::int32_t one = 1;
  std::int32_t sum = 0;
  CCLTUNE_ASSIGN_OR_RETURN(ReduceFn reduce, GetReduceFn(core::Dtype::kInt32, core::RedOp::kSum));
  CollArgs args{core::Op::kAllReduce,
                core::Dtype::kInt32,
                core::RedOp::kSum,
                &one,
                &sum,
                1,
                sizeof(std::int32_t),
                reduce};
  return comm_.Run("barrier", "direct", &AllReduceDirect, args, deadline);
}

core::Result<std::vector<double>> HostBackend::AllReduceMax(const std::vector<double>& values,
                                                            Deadline deadline) {
  std::vector<double> out(values.size());
  CollArgs args{core::Op::kAllReduce, core::Dtype::kFp32, core::RedOp::kMax, values.data(),
                out.data(),           values.size(),      sizeof(double)};
  CCLTUNE_RETURN_IF_ERROR(comm_.Run("allReduceMax", "direct", &MaxOfAll, args, deadline));
  return out;
}

core::Status HostBackend::Recover(int epoch, Deadline deadline) {
  // A peer still stuck in the failed collective learns at once that it is over (Aborted).
  if (comm_.mesh() != nullptr) comm_.mesh()->CloseForRecovery();
  comm_.Reset(nullptr);
  const MeshConfig config{rank_, world_, epoch, options_.listen_host};
  auto mesh = BuildTcpMesh(config, directory_, cancel_, deadline);
  if (!mesh.ok()) return mesh.status().WithContext("recover to epoch " + std::to_string(epoch));
  hosts_ = (*mesh)->hosts();
  comm_.Reset(std::move(mesh).value());
  epoch_ = epoch;
  return core::Status::Ok();
}

void HostBackend::Disconnect() {
  if (comm_.mesh() != nullptr) comm_.mesh()->Abandon();
}

core::FingerprintInput HostBackend::FingerprintInfo() const {
  std::map<std::string, int> per_host;
  for (const std::string& h : hosts_) ++per_host[h];
  int most = 0;
  for (const auto& [host, n] : per_host) most = std::max(most, n);
  core::FingerprintInput in;
  in.backend = "host";
  in.gpu_model = "cpu";
  in.nodes = std::max<int>(1, static_cast<int>(per_host.size()));
  in.gpus_per_node = most > 0 ? most : world_;
  in.p2p_summary = "tcp";
  return in;
}

core::Result<std::unique_ptr<Backend>> CreateHostBackend(int rank, int world,
                                                         PeerDirectory& directory,
                                                         const CancelToken& cancel,
                                                         const std::string& listen_host,
                                                         Deadline deadline) {
  CCLTUNE_ASSIGN_OR_RETURN(std::unique_ptr<HostBackend> backend,
                           HostBackend::Create(rank, world, directory, cancel,
                                               HostBackendOptions::FromEnv(listen_host), deadline));
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace ccltune::worker::host
