// What libccltune-nccl knows of each communicator the application made through it: whether
// it blocks, whether a libccltune context serves it (made lazily at its first eligible
// collective, when every rank is in step), and the counts of the destroy-time summary.
// Communicators made elsewhere (pncclCommInitRank, before the shim was loaded, the
// runtime's own splits) are unknown and always forwarded. Thread-safe.
#pragma once

#include <nccl.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "runtime/nccl_shim/buffer_board.h"
#include "runtime/runtime_comm.h"

namespace ccltune::shim {

// Why a call went to the real NCCL unchanged; the summary counts each.
enum class Forward : int {
  kInGroup,      // between ncclGroupStart and ncclGroupEnd
  kNonBlocking,  // the communicator is non-blocking
  kNotTuned,     // a type or op ccltune does not tune (ncclUint64, a user-defined op, ...)
  kEmpty,        // count 0
  kCapture,      // stream capture began before the context existed
  kPlain,        // no context for this communicator (the note said why)
  kWinnerNccl,   // the tuned choice for this call is NCCL's own
  kStagingFull,  // the choice's signature found no room in the runtime's staging area
  kSlowerHere,   // the in-program trial found the choice slower than NCCL's own
  kNoRecords,    // its op, type and reduction have no record (RuntimeComm::kNoRecords)
  kCount
};
const char* ForwardName(Forward f);

struct CommEntry {
  enum class State { kUntried, kServing, kPlain };

  explicit CommEntry(bool blocks) : blocking(blocks) {}
  const bool blocking;

  std::mutex mu;  // guards everything below but `forwarded`
  State state = State::kUntried;
  int rank = -1;  // in the communicator, once asked (notes are rank 0's)
  int size = -1;  // its rank count, once asked
  std::string plain_why;
  std::string mode;  // "one process" / "N processes", once a context was made
  // Choice and call shapes served in a group so far (group_calls.cc: the first one of each
  // launches from one thread per rank); bounded by the shapes a program uses.
  std::set<std::string> group_shapes;
  std::unique_ptr<runtime::RuntimeComm> ctx;
  // A one-process context that found nothing to serve, kept until destroy: closing a
  // one-process clique waits for its GPUs to go idle, and at first use a peer thread may
  // already have forwarded its call to NCCL, whose kernel then waits for this thread's
  // (nccl-tests -t N with an unreadable results file waited out the 30 s bound).
  std::unique_ptr<runtime::RuntimeComm> unused_ctx;
  // Ranks that are threads of this process swap their buffers here (buffer_board.h); null
  // for a communicator over several processes. `board_round` counts this rank's rounds.
  std::shared_ptr<BufferBoard> board;
  std::uint64_t board_round = 0;
  // Calls served per choice: keyed by views into ctx's table while it lives (no string per
  // call), folded into `ran` before it goes.
  std::unordered_map<std::string_view, std::uint64_t> ran_live;
  std::map<std::string, std::uint64_t> ran;

  void FoldRan();
  std::array<std::atomic<std::uint64_t>, static_cast<int>(Forward::kCount)> forwarded{};

  // Also counted in program telemetry (issue 45), but for kWinnerNccl, which the context
  // counts itself (RuntimeComm::Serve, for libccltune's calls too).
  void Count(Forward f);

  // The context's failure (issue 36), kept past the context and read without `mu`: the
  // application's watchdog asks ncclCommGetAsyncError from its own thread, maybe while
  // another holds `mu` making the context. Null until a context with our kernels is made.
  void SetFailure(std::shared_ptr<const runtime::CommFailure> f);
  std::shared_ptr<const runtime::CommFailure> Failure() const;
  // "12 calls served by winners (oneshot:... 10, rs+ag 2), 3 forwarded (in a group 3)"
  std::string Summary();

 private:
  mutable std::mutex failure_mu_;
  std::shared_ptr<const runtime::CommFailure> failure_;
};

class CommRegistry {
 public:
  static CommRegistry& Get();
  void Add(ncclComm_t comm, bool blocking);
  std::shared_ptr<CommEntry> Find(ncclComm_t comm) const;
  std::shared_ptr<CommEntry> Remove(ncclComm_t comm);

 private:
  mutable std::mutex mu_;
  std::unordered_map<ncclComm_t, std::shared_ptr<CommEntry>> comms_;
};

}  // namespace ccltune::shim
