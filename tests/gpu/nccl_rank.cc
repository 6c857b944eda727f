// A forked rank's NCCL communicator (nccl_rank.h).
#include "tests/gpu/nccl_rank.h"

#include <optional>

#include "core/gpu/hex_bytes.h"
#include "tests/gpu/file_peer_directory.h"

namespace ccltune::testing {

ncclComm_t SharedNcclComm(const std::string& dir, int rank, int world) {
  FilePeerDirectory files(dir, rank, world);
  ncclUniqueId id{};
  if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) return nullptr;
  auto got = files.Broadcast(
      "uid", 0, rank == 0 ? std::optional(gpu::HexBytes(&id, sizeof(id))) : std::nullopt,
      worker::DeadlineIn(60));
  if (!got.ok() || !gpu::UnhexBytes(*got, &id, sizeof(id), "ncclUniqueId").ok()) return nullptr;
  ncclComm_t comm = nullptr;
  return ncclCommInitRank(&comm, world, id, rank) == ncclSuccess ? comm : nullptr;
}

}  // namespace ccltune::testing
