// CUDA IPC peer memory, its capability probe and its growth (peer_memory.h).
#include "core/gpu/peer_memory.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <sstream>
#include <thread>

#include "core/gpu/cuda_check.h"
#include "core/gpu/hex_bytes.h"
#include "core/node/node_name.h"

namespace ccltune::gpu {
namespace {

constexpr std::size_t kSignalBytes = sizeof(kernels::PeerSignals);
constexpr std::size_t kProbeBytes = kernels::kMaxPeers * sizeof(unsigned int);
constexpr std::size_t kMinData = std::size_t{64} << 20;
constexpr std::size_t kDataGrain = std::size_t{2} << 20;
constexpr unsigned int kProbeValue = 0x5eed0000u;

std::string CudaText(cudaError_t e) {
  (void)cudaGetLastError();  // not sticky: the next check must not see it again
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

}  // namespace

const std::string& ProcessToken() {
  static const std::string token = [] {
    std::random_device rd;
    const std::uint64_t nonce = (std::uint64_t{rd()} << 32) ^ rd();
    std::ostringstream os;
    os << core::BootId() << '/' << getpid() << '/' << std::hex << nonce;
    return os.str();
  }();
  return token;
}

IpcMapping& IpcMapping::operator=(IpcMapping&& o) noexcept {
  if (this != &o) {
    if (ptr_ != nullptr) (void)cudaIpcCloseMemHandle(ptr_);
    ptr_ = o.ptr_;
    o.ptr_ = nullptr;
  }
  return *this;
}

IpcMapping::~IpcMapping() {
  if (ptr_ != nullptr) (void)cudaIpcCloseMemHandle(ptr_);
}

PeerMemory::~PeerMemory() = default;

std::unique_ptr<PeerMemory> PeerMemory::Unavailable(int rank, int world, core::PeerDirectory& dir,
                                                    std::string why) {
  std::unique_ptr<PeerMemory> m(new PeerMemory(rank, world, dir));
  m->problem_ = std::move(why);
  return m;
}

core::Result<std::unique_ptr<PeerMemory>> PeerMemory::Probe(int rank, int world,
                                                            core::PeerDirectory& dir,
                                                            cudaStream_t stream,
                                                            core::Deadline deadline) {
  std::unique_ptr<PeerMemory> m(new PeerMemory(rank, world, dir));
  if (world < 2 || world > kernels::kMaxPeers) {
    m->problem_ = "peer kernels need 2 to " + std::to_string(kernels::kMaxPeers) +
                  " ranks (world size " + std::to_string(world) + ")";
    return m;
  }
  CCLTUNE_ASSIGN_OR_RETURN(m->problem_, m->SameNode(deadline));
  if (!m->usable()) return m;
  CCLTUNE_ASSIGN_OR_RETURN(
      m->epochs_,
      DeviceBuffer::Allocate(sizeof(unsigned int) * kernels::kEpochWords, MemoryKind::kCuda));
  CCLTUNE_ASSIGN_OR_RETURN(m->timed_out_,
                           MappedHost::Allocate(sizeof(int) * kernels::kTimedOutWords));
  CCLTUNE_RETURN_IF_ERROR(
      m->Share(m->signals_, kSignalBytes + kProbeBytes, "peer-signals", deadline, &m->problem_));
  if (!m->usable()) return m;
  CCLTUNE_RETURN_IF_ERROR(m->CheckWrites(stream, deadline));
  return m;
}

core::Result<std::string> PeerMemory::SameNode(core::Deadline deadline) {
  CCLTUNE_ASSIGN_OR_RETURN(std::vector<std::string> nodes,
                           dir_.AllGather("peer-node", core::NodeIdentity(), deadline));
  // Both halves: CUDA IPC needs one kernel (boot id), and ranks of different node names are
  // on different nodes as NCCL and the fingerprint see them (emulated nodes share a kernel).
  for (int r = 1; r < world_; ++r) {
    if (nodes[r] != nodes[0]) {
      return "ranks span nodes (rank 0 on node " + core::NodeOfIdentity(nodes[0]) + ", boot " +
             core::BootOfIdentity(nodes[0]) + "; rank " + std::to_string(r) + " on node " +
             core::NodeOfIdentity(nodes[r]) + ", boot " + core::BootOfIdentity(nodes[r]) +
             "): peer memory needs every rank on one node";
    }
  }
  return std::string();
}

namespace {

// What a rank publishes for one shared region: "<process token> <device> <pointer> <IPC
// handle in hex, or !why not>". The pointer serves peers of the same process, the handle
// the others.
std::string RegionRecord(void* own, int device) {
  cudaIpcMemHandle_t handle{};
  const cudaError_t got = cudaIpcGetMemHandle(&handle, own);
  std::ostringstream os;
  os << ProcessToken() << ' ' << device << ' ' << reinterpret_cast<std::uintptr_t>(own) << ' '
     << (got == cudaSuccess ? HexBytes(&handle, sizeof(handle))
                            : "!cudaIpcGetMemHandle failed: " + CudaText(got));
  return os.str();
}

struct PeerRecord {
  std::string token;
  int device = -1;
  std::uintptr_t pointer = 0;
  std::string handle;  // hex, or "!why not"
};

core::Result<PeerRecord> ParseRecord(const std::string& text, int r) {
  PeerRecord rec;
  std::istringstream is(text);
  is >> rec.token >> rec.device >> rec.pointer;
  std::getline(is >> std::ws, rec.handle);
  if (!is.eof() || rec.token.empty() || rec.handle.empty()) {
    return core::Internal("peer memory: rank " + std::to_string(r) + "'s record is malformed");
  }
  return rec;
}

// A peer of this process: its memory is ours to use directly once our device may access
// its device (enabled once per device pair for the whole process; threads race to it).
std::string OpenSameProcess(const PeerRecord& rec, int r, void** base) {
  int mine = -1;
  (void)cudaGetDevice(&mine);
  if (rec.device != mine) {
    const cudaError_t on = cudaDeviceEnablePeerAccess(rec.device, 0);
    if (on != cudaSuccess && on != cudaErrorPeerAccessAlreadyEnabled) {
      return "peer access from device " + std::to_string(mine) + " to rank " + std::to_string(r) +
             "'s device " + std::to_string(rec.device) + " failed (" + CudaText(on) + ")";
    }
    (void)cudaGetLastError();
  }
  *base = reinterpret_cast<void*>(rec.pointer);
  return std::string();
}

std::string OpenOtherProcess(const PeerRecord& rec, int r, IpcMapping* mapping, void** base,
                             core::Status* error) {
  cudaIpcMemHandle_t peer{};
  *error = UnhexBytes(rec.handle, &peer, sizeof(peer), "cudaIpcMemHandle");
  if (!error->ok()) return std::string();
  void* p = nullptr;
  const cudaError_t open = cudaIpcOpenMemHandle(&p, peer, cudaIpcMemLazyEnablePeerAccess);
  if (open != cudaSuccess) {
    return "cudaIpcOpenMemHandle of rank " + std::to_string(r) + "'s memory failed (" +
           CudaText(open) +
           "): ranks must share one IPC namespace (pods need hostIPC: true, or all ranks "
           "in one pod) and have P2P access";
  }
  *mapping = IpcMapping(p);
  *base = p;
  return std::string();
}

}  // namespace

// Exports `region`, maps every peer's (directly for peers of this process, by CUDA IPC for
// the others), and agrees with all ranks on whether it worked: one rank's failure becomes
// every rank's *problem.
core::Status PeerMemory::Share(SharedRegion& region, std::size_t bytes, const std::string& name,
                               core::Deadline deadline, std::string* problem) {
  CCLTUNE_ASSIGN_OR_RETURN(region.own, DeviceBuffer::Allocate(bytes, MemoryKind::kCuda));
  CCLTUNE_CUDA_TRY(cudaMemset(region.own.data(), 0, bytes));
  int device = -1;
  CCLTUNE_CUDA_TRY(cudaGetDevice(&device));
  CCLTUNE_ASSIGN_OR_RETURN(std::vector<std::string> all,
                           dir_.AllGather(name, RegionRecord(region.own.data(), device), deadline));
  std::string local;
  int same_process = 0;
  region.mapped.clear();
  region.mapped.resize(world_);
  region.base.assign(world_, nullptr);
  region.base[rank_] = region.own.data();
  for (int r = 0; r < world_ && local.empty(); ++r) {
    if (r == rank_) continue;
    CCLTUNE_ASSIGN_OR_RETURN(const PeerRecord rec, ParseRecord(all[r], r));
    if (rec.token == ProcessToken()) {
      local = OpenSameProcess(rec, r, &region.base[r]);
      ++same_process;
      continue;
    }
    if (rec.handle[0] == '!') {
      local = "rank " + std::to_string(r) + ": " + rec.handle.substr(1);
      break;
    }
    core::Status error;
    local = OpenOtherProcess(rec, r, &region.mapped[r], &region.base[r], &error);
    CCLTUNE_RETURN_IF_ERROR(error);
  }
  CCLTUNE_ASSIGN_OR_RETURN(std::vector<std::string> verdicts,
                           dir_.AllGather(name + "-ok", local, deadline));
  for (int r = 0; r < world_; ++r) {
    if (!verdicts[r].empty()) {
      *problem = "rank " + std::to_string(r) + ": " + verdicts[r];
      region.mapped.clear();
      region.base.clear();
      region.own.Reset();
      return core::Status::Ok();
    }
  }
  region.bytes = bytes;
  same_process_peers_ = same_process;
  return core::Status::Ok();
}

// Every rank writes into every rank's probe slots through its mapping; each then reads
// its own slots back. Catches mappings that open but do not carry writes.
core::Status PeerMemory::CheckWrites(cudaStream_t stream, core::Deadline deadline) {
  kernels::ProbeSlots slots;
  for (int r = 0; r < world_; ++r) {
    slots.slot[r] =
        reinterpret_cast<unsigned int*>(static_cast<char*>(signals_.base[r]) + kSignalBytes);
  }
  CCLTUNE_CUDA_TRY(kernels::LaunchPeerProbeWrite(Team(0), slots, kProbeValue, stream));
  CCLTUNE_RETURN_IF_ERROR(WaitStreamIdle(stream, deadline, "peer probe write"));
  CCLTUNE_RETURN_IF_ERROR(dir_.AllGather("peer-probe-written", "", deadline).status());
  // Read back on our stream into pinned memory, so this wait too has the deadline.
  CCLTUNE_ASSIGN_OR_RETURN(MappedHost readback,
                           MappedHost::Allocate(sizeof(unsigned int) * kernels::kMaxPeers));
  CCLTUNE_CUDA_TRY(cudaMemcpyAsync(readback.host(), slots.slot[rank_],
                                   sizeof(unsigned int) * kernels::kMaxPeers,
                                   cudaMemcpyDeviceToHost, stream));
  CCLTUNE_RETURN_IF_ERROR(WaitStreamIdle(stream, deadline, "peer probe read-back"));
  const auto* seen = static_cast<const unsigned int*>(readback.host());
  std::string local;
  for (int r = 0; r < world_ && local.empty(); ++r) {
    if (seen[r] != kProbeValue + static_cast<unsigned>(r)) {
      local = "P2P probe: the value rank " + std::to_string(r) +
              " wrote here did not arrive (read " + std::to_string(seen[r]) + ")";
    }
  }
  CCLTUNE_ASSIGN_OR_RETURN(std::vector<std::string> verdicts,
                           dir_.AllGather("peer-probe-ok", local, deadline));
  for (int r = 0; r < world_; ++r) {
    if (!verdicts[r].empty()) problem_ = "rank " + std::to_string(r) + ": " + verdicts[r];
  }
  CCLTUNE_RETURN_IF_ERROR(Reset(stream));
  return WaitStreamIdle(stream, deadline, "peer signal reset");
}

core::Status PeerMemory::Reserve(std::size_t bytes, core::Deadline deadline) {
  if (!usable()) return core::FailedPrecondition("skip: " + problem_);
  if (Fits(bytes)) return core::Status::Ok();
  std::size_t want = std::max({bytes, 2 * data_.bytes, kMinData});
  want = (want + kDataGrain - 1) / kDataGrain * kDataGrain;
  // Close our view of the old region everywhere before its owners free it.
  data_.mapped.clear();
  data_.base.clear();
  data_.bytes = 0;
  const std::string gen = std::to_string(generation_++);
  CCLTUNE_RETURN_IF_ERROR(dir_.AllGather("peer-data-closed-" + gen, "", deadline).status());
  data_.own.Reset();
  std::string problem;
  CCLTUNE_RETURN_IF_ERROR(Share(data_, want, "peer-data-" + gen, deadline, &problem));
  if (!problem.empty()) {
    return core::FailedPrecondition("skip: peer memory of " + std::to_string(want) +
                                    " bytes: " + problem);
  }
  return core::Status::Ok();
}

void* PeerMemory::Data(int r, std::size_t offset) const {
  return static_cast<char*>(data_.base[r]) + offset;
}

kernels::PeerTeam PeerMemory::Team(std::uint64_t timeout_ns) const {
  kernels::PeerTeam t;
  t.rank = rank_;
  t.world = world_;
  for (int r = 0; r < world_; ++r)
    t.signals[r] = static_cast<kernels::PeerSignals*>(signals_.base[r]);
  t.epochs = static_cast<unsigned int*>(epochs_.data());
  t.timed_out = static_cast<int*>(timed_out_.device());
  t.timeout_ns = timeout_ns;
  return t;
}

core::Status PeerMemory::Reset(cudaStream_t stream) {
  auto* words = static_cast<volatile int*>(timed_out_.host());
  for (int i = 0; i < kernels::kTimedOutWords; ++i) words[i] = 0;
  CCLTUNE_CUDA_TRY(kernels::ResetPeerSignals(Team(0), stream));
  return core::Status::Ok();
}

std::vector<int> PeerMemory::MissingRanks() const {
  std::vector<int> missing;
  const volatile int* words = TimedOutWords();
  for (int r = 0; r < world_ && r < kernels::kMaxPeers; ++r) {
    if (words[1 + r] != 0) missing.push_back(r);
  }
  return missing;
}

}  // namespace ccltune::gpu
