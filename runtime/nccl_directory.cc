// PeerDirectory over NCCL (nccl_directory.h).
#include "runtime/nccl_directory.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/gpu/cuda_check.h"
#include "core/gpu/nccl_api.h"
#include "runtime/waits.h"

namespace ccltune::runtime {

NcclDirectory::~NcclDirectory() {
  if (!abandoned_) return;
  (void)new gpu::MappedHost(std::move(host_));
  (void)new gpu::DeviceBuffer(std::move(device_));
}

core::Result<char*> NcclDirectory::Stage(std::size_t bytes) {
  const std::size_t need = bytes * static_cast<std::size_t>(world_ + 1);
  if (need > capacity_) {
    CCLTUNE_ASSIGN_OR_RETURN(host_, gpu::MappedHost::Allocate(need));
    CCLTUNE_ASSIGN_OR_RETURN(device_, gpu::DeviceBuffer::Allocate(need, gpu::MemoryKind::kCuda));
    capacity_ = need;
  }
  std::memset(host_.host(), 0, need);
  return static_cast<char*>(host_.host());
}

core::Status NcclDirectory::Gather(std::size_t bytes, core::Deadline deadline,
                                   const std::string& what) {
  const std::size_t total = bytes * static_cast<std::size_t>(world_);
  char* host = static_cast<char*>(host_.host());
  char* dev = static_cast<char*>(device_.data());
  abandoned_ = true;  // until the exchange completed
  CCLTUNE_CUDA_TRY(
      cudaMemcpyAsync(dev + total, host + total, bytes, cudaMemcpyHostToDevice, stream_));
  CCLTUNE_NCCL_TRY(comm_,
                   gpu::Nccl().AllGather(dev + total, dev, bytes, ncclUint8, comm_, stream_));
  CCLTUNE_RETURN_IF_ERROR(WaitEnqueued(comm_, deadline, what));
  CCLTUNE_CUDA_TRY(cudaMemcpyAsync(host, dev, total, cudaMemcpyDeviceToHost, stream_));
  CCLTUNE_RETURN_IF_ERROR(WaitStream(stream_, comm_, deadline, what));
  abandoned_ = false;
  return core::Status::Ok();
}

core::Result<std::vector<std::string>> NcclDirectory::AllGather(const std::string& name,
                                                                const std::string& mine,
                                                                core::Deadline deadline) {
  if (abandoned_) return core::FailedPrecondition(name + ": an earlier exchange failed");
  if (mine.size() > kMaxDirectoryValue) {
    return core::InvalidArgument(name + ": value of " + std::to_string(mine.size()) +
                                 " bytes exceeds " + std::to_string(kMaxDirectoryValue));
  }
  constexpr std::size_t kLen = sizeof(std::uint64_t);
  CCLTUNE_ASSIGN_OR_RETURN(char* staged, Stage(kLen));
  const std::uint64_t my_len = mine.size();
  std::memcpy(staged + kLen * world_, &my_len, kLen);
  CCLTUNE_RETURN_IF_ERROR(Gather(kLen, deadline, name));
  std::vector<std::uint64_t> len(world_);
  std::memcpy(len.data(), host_.host(), kLen * world_);
  const std::uint64_t longest =
      std::max<std::uint64_t>(1, *std::max_element(len.begin(), len.end()));
  if (longest > kMaxDirectoryValue) {
    return core::DataLoss(name + ": a rank sent " + std::to_string(longest) + " bytes");
  }
  CCLTUNE_ASSIGN_OR_RETURN(staged, Stage(longest));
  std::memcpy(staged + longest * world_, mine.data(), mine.size());
  CCLTUNE_RETURN_IF_ERROR(Gather(longest, deadline, name));
  const char* all = static_cast<const char*>(host_.host());
  std::vector<std::string> out;
  for (int r = 0; r < world_; ++r) out.emplace_back(all + longest * r, len[r]);
  return out;
}

core::Result<std::string> NcclDirectory::Broadcast(const std::string& name, int root,
                                                   const std::optional<std::string>& value,
                                                   core::Deadline deadline) {
  CCLTUNE_ASSIGN_OR_RETURN(std::vector<std::string> all,
                           AllGather(name, rank_ == root ? value.value_or("") : "", deadline));
  return all.at(static_cast<std::size_t>(root));
}

}  // namespace ccltune::runtime
