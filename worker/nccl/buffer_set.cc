// Choice buffers with slice rotation and registration (buffer_set.h).
#include "worker/nccl/buffer_set.h"

#include <algorithm>

#include "worker/nccl/gpu_names.h"

namespace ccltune::worker::nccl {
namespace {

constexpr std::size_t kAlign = 4096;  // NCCL_WIN_REQUIRED_ALIGNMENT, and page friendly
constexpr int kMaxSlices = 1024;

std::size_t RoundUp(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

}  // namespace

BufferLayout PlanLayout(std::size_t send_bytes, std::size_t recv_bytes, std::size_t l2_bytes) {
  BufferLayout l;
  l.send_bytes = send_bytes;
  l.recv_bytes = recv_bytes;
  l.send_stride = RoundUp(std::max<std::size_t>(send_bytes, 1), kAlign);
  l.recv_stride = RoundUp(std::max<std::size_t>(recv_bytes, 1), kAlign);
  const std::size_t set = l.send_stride + l.recv_stride;
  const std::size_t target = 2 * l2_bytes;
  if (set < target) {
    l.slices = static_cast<int>(std::min<std::size_t>(kMaxSlices, (target + set - 1) / set));
  }
  return l;
}

core::Status CopySliceZeroToAll(void* base, std::size_t stride, int slices, cudaStream_t stream) {
  char* b = static_cast<char*>(base);
  for (int done = 1; done < slices; done *= 2) {
    const std::size_t n = static_cast<std::size_t>(std::min(done, slices - done));
    CCLTUNE_CUDA_TRY(cudaMemcpyAsync(b + stride * static_cast<std::size_t>(done), b, stride * n,
                                     cudaMemcpyDeviceToDevice, stream));
  }
  return core::Status::Ok();
}

Registration::~Registration() {
  if (comm_ == nullptr || comm_->aborted()) return;
  if (window_ != nullptr) (void)ncclCommWindowDeregister(comm_->get(), window_);
  if (handle_ != nullptr) (void)ncclCommDeregister(comm_->get(), handle_);
}

core::Result<std::unique_ptr<BufferSet>> BufferSet::Create(const BufferLayout& layout,
                                                           BufferMode mode,
                                                           std::shared_ptr<Communicator> comm,
                                                           Deadline deadline,
                                                           const CancelToken& cancel) {
  const MemoryKind kind = mode == BufferMode::kPlain ? MemoryKind::kCuda : MemoryKind::kNccl;
  CCLTUNE_ASSIGN_OR_RETURN(std::unique_ptr<BufferSet> b, Allocate(layout, kind));
  b->comm_ = std::move(comm);
  if (mode != BufferMode::kPlain) CCLTUNE_RETURN_IF_ERROR(b->Register(mode, deadline, cancel));
  return b;
}

core::Result<std::unique_ptr<BufferSet>> BufferSet::CreatePlain(const BufferLayout& layout) {
  return Allocate(layout, MemoryKind::kCuda);
}

core::Result<std::unique_ptr<BufferSet>> BufferSet::Allocate(const BufferLayout& layout,
                                                             MemoryKind kind) {
  std::unique_ptr<BufferSet> b(new BufferSet());
  b->layout_ = layout;
  const std::size_t n = static_cast<std::size_t>(layout.slices);
  CCLTUNE_ASSIGN_OR_RETURN(b->send_, DeviceBuffer::Allocate(layout.send_stride * n, kind));
  CCLTUNE_ASSIGN_OR_RETURN(b->recv_, DeviceBuffer::Allocate(layout.recv_stride * n, kind));
  b->send_base_ = static_cast<char*>(b->send_.data());
  b->recv_base_ = static_cast<char*>(b->recv_.data());
  return b;
}

core::Result<std::unique_ptr<BufferSet>> BufferSet::CreateOnPeers(const BufferLayout& layout,
                                                                  std::size_t staging_bytes,
                                                                  PeerMemory& peers,
                                                                  Deadline deadline) {
  std::unique_ptr<BufferSet> b(new BufferSet());
  b->layout_ = layout;
  const std::size_t n = static_cast<std::size_t>(layout.slices);
  b->recv_offset_ = layout.send_stride * n;
  b->staging_offset_ = b->recv_offset_ + layout.recv_stride * n;
  CCLTUNE_RETURN_IF_ERROR(
      peers.Reserve(b->staging_offset_ + RoundUp(staging_bytes, kAlign), deadline));
  b->peers_ = &peers;
  b->send_base_ = static_cast<char*>(peers.Data(peers.rank(), 0));
  b->recv_base_ = b->send_base_ + b->recv_offset_;
  return b;
}

kernels::PeerOperands BufferSet::Operands(int slice) const {
  kernels::PeerOperands ops;
  const std::size_t s = static_cast<std::size_t>(slice);
  for (int r = 0; r < peers_->world(); ++r) {
    ops.in[r] = peers_->Data(r, layout_.send_stride * s);
    ops.out[r] = peers_->Data(r, recv_offset_ + layout_.recv_stride * s);
    ops.staging[r] = peers_->Data(r, staging_offset_);
  }
  return ops;
}

void* BufferSet::staging() const { return peers_->Data(peers_->rank(), staging_offset_); }

core::Status BufferSet::Register(BufferMode mode, Deadline deadline, const CancelToken& cancel) {
  DeviceBuffer* bufs[2] = {&send_, &recv_};
  for (int i = 0; i < 2; ++i) {
    // NCCL fills the outputs from its group thread on a non-blocking communicator: they
    // live in members, which outlive any wait that gives up.
    if (mode == BufferMode::kRegistered) {
      CCLTUNE_NCCL_TRY(comm_->get(), ncclCommRegister(comm_->get(), bufs[i]->data(),
                                                      bufs[i]->bytes(), &handles_[i]));
    } else {
      CCLTUNE_NCCL_TRY(comm_->get(),
                       ncclCommWindowRegister(comm_->get(), bufs[i]->data(), bufs[i]->bytes(),
                                              &windows_[i], NCCL_WIN_COLL_SYMMETRIC));
    }
    core::Status done = comm_->WaitReady(deadline, cancel, "buffer registration");
    if (!done.ok()) {
      comm_->Abort();  // stops NCCL's thread, which would still write handles_/windows_
      return done;
    }
    registrations_.push_back(std::make_unique<Registration>(comm_, handles_[i], windows_[i]));
    // NCCL quietly registers nothing when the communicator lacks symmetric support: no size
    // will do better, so the adaptive search does not try it again (Unsupported).
    if (mode == BufferMode::kSymmetric && windows_[i] == nullptr) {
      return core::Unsupported(
          "skip: NCCL created no symmetric window (no symmetric support on this communicator)");
    }
  }
  return core::Status::Ok();
}

BufferSet::~BufferSet() {
  registrations_.clear();  // before the memory they describe
}

void* BufferSet::send(int slice) const {
  return send_base_ + layout_.send_stride * static_cast<std::size_t>(slice);
}

void* BufferSet::recv(int slice) const {
  return recv_base_ + layout_.recv_stride * static_cast<std::size_t>(slice);
}

}  // namespace ccltune::worker::nccl
