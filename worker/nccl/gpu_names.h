// The NCCL backend's names for the GPU building blocks it shares with the runtime and the
// plugin (core/gpu/: checked calls, RAII owners, NCCL enqueue, peer memory, fingerprint).
#pragma once

#include "core/gpu/cuda_check.h"
#include "core/gpu/cuda_resources.h"
#include "core/gpu/fingerprint_probe.h"
#include "core/gpu/hex_bytes.h"
#include "core/gpu/hier_enqueue.h"
#include "core/gpu/launch.h"
#include "core/gpu/peer_enqueue.h"
#include "core/gpu/peer_memory.h"

namespace ccltune::worker::nccl {

using gpu::CudaError;
using gpu::DeviceBuffer;
using gpu::EnqueueDirect;
using gpu::EnqueueRsAgPart;
using gpu::Event;
using gpu::GraphExec;
using gpu::HexBytes;
using gpu::HierAllReduce;
using gpu::IpcMapping;
using gpu::MappedHost;
using gpu::MemoryKind;
using gpu::NcclError;
using gpu::NcclRedOp;
using gpu::NcclType;
using gpu::OpShape;
using gpu::PeerAlgoFor;
using gpu::PeerEnqueuer;
using gpu::PeerMemory;
using gpu::PeerShapeOf;
using gpu::ProbeFingerprint;
using gpu::ProbeP2pSummary;
using gpu::SharedRegion;
using gpu::Stream;
using gpu::UnhexBytes;

}  // namespace ccltune::worker::nccl
