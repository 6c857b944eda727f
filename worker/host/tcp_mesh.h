// TcpMesh: one connected TCP socket from this rank to every other rank of an epoch, and
// the poll()-based progress engine that moves framed messages over them.
//
// Exchange() posts sends and receives to several peers at once and progresses all of them
// together, so a ring step never deadlocks on large messages (no rank blocks in a send while
// its peer blocks in its own send). Every wait polls at most 50 ms at a time, then checks the
// CancelToken and the deadline. A peer whose socket closes without a goodbye frame (crash,
// SIGKILL, abortive close) is reported as PeerLost naming it, even while this rank waits on
// other peers. After any failed Exchange the mesh is broken for good: build a new one.
//
// Not thread-safe: one thread drives a mesh.
#pragma once

#include <poll.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/base/unique_fd.h"
#include "worker/deadline.h"
#include "worker/host/wire.h"

namespace ccltune::worker::host {

using core::UniqueFd;

struct SendOp {
  int peer = -1;
  const void* data = nullptr;
  std::size_t bytes = 0;
};

struct RecvOp {
  int peer = -1;
  void* data = nullptr;  // exactly `bytes` arrive here; a frame of another size is an error
  std::size_t bytes = 0;
};

// Where a wait happens, for error messages ("allReduce ring step 3"); formatted only on error.
struct StepLabel {
  const char* op = "";
  const char* algo = "";
  int step = 0;
  std::string ToString() const;
};

struct WaitSpec {
  Deadline deadline;
  const CancelToken* cancel = nullptr;
  StepLabel label;
};

class TcpMesh {
 public:
  // `links[p]` is the connected socket to rank p (invalid for p == rank); `hosts[p]` the
  // address rank p listened on. Built by BuildTcpMesh (mesh_setup.h).
  TcpMesh(int rank, int epoch, std::vector<UniqueFd> links, std::vector<std::string> hosts);
  TcpMesh(const TcpMesh&) = delete;
  TcpMesh& operator=(const TcpMesh&) = delete;
  // A healthy mesh says goodbye to every peer, so their survivors do not take this rank's
  // exit for a crash; a broken or abandoned one just closes.
  ~TcpMesh();

  int rank() const { return rank_; }
  int world_size() const { return static_cast<int>(links_.size()); }
  int epoch() const { return epoch_; }
  const std::vector<std::string>& hosts() const { return hosts_; }
  bool broken() const { return !broken_reason_.empty(); }

  // Blocks until every send was handed to the kernel and every receive arrived, or fails:
  // Timeout, PeerLost (naming the rank), the token's status, Internal on a protocol error.
  // Messages to/from one peer are matched in posting order; all carry (seq, step).
  core::Status Exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs,
                        std::uint32_t seq, std::uint32_t step, const WaitSpec& wait);

  // Marks the mesh unusable after a failed collective that did not fail inside Exchange
  // (e.g. a rank that stopped communicating): its peers' bytes may be half-read.
  void MarkBroken(const std::string& why) {
    if (!broken()) broken_reason_ = why;
  }

  // Closes every socket without a goodbye, as a crash would: peers report PeerLost. For a
  // rank that gives up, and for failure injection in tests.
  void Abandon();
  // Tells every peer this mesh is dropped for recovery (they get Aborted), then closes.
  void CloseForRecovery();

  // Public so the progress engine's file-local helpers can name it; not part of the API.
  struct Transfer {
    int peer = -1;
    std::byte* data = nullptr;
    std::size_t bytes = 0;
    FrameHeader header;
    std::size_t done = 0;  // over header + payload
  };

 private:
  struct Link {
    UniqueFd fd;
    std::vector<std::byte> staged;  // bytes read ahead after the peer hung up
    std::size_t staged_off = 0;
    bool eof = false;      // the peer closed its side; only `staged` is left to read
    bool goodbye = false;  // ... and it said goodbye first (a clean exit)
    // The last bytes taken from the stream: a control frame may have been read as part of
    // a data frame's payload when the peer dropped the mesh in the middle of a message.
    std::array<std::byte, sizeof(FrameHeader)> tail{};
    std::size_t tail_len = 0;
  };
  std::string Who(int peer) const;  // "rank 3"
  long ReadLink(Link& link, void* dst, std::size_t n);
  core::Status Post(std::span<const SendOp> sends, std::span<const RecvOp> recvs, std::uint32_t seq,
                    std::uint32_t step);
  core::Status Pass(const WaitSpec& wait, std::uint32_t seq, std::uint32_t step, bool& progressed,
                    bool& done);
  core::Status PollOnce(const WaitSpec& wait);
  core::Status CheckWait(const WaitSpec& wait, Clock::time_point start) const;
  core::Status PumpSend(Transfer& t, const StepLabel& label, bool& progressed);
  core::Status PumpRecv(Transfer& t, std::uint32_t seq, std::uint32_t step, const StepLabel& label,
                        bool& progressed);
  core::Status CheckHeader(const Transfer& t, std::uint32_t seq, std::uint32_t step,
                           const StepLabel& label) const;
  bool DrainHungUp(Link& link);
  core::Status HandleHangup(int peer, bool sending, const StepLabel& label);
  static void NoteTail(Link& link, const std::byte* data, std::size_t n);
  // The control frame that ends the peer's stream (the last 24 bytes taken or staged),
  // kData when there is none.
  FrameKind FinalControlFrame(const Link& link) const;
  core::Status PeerEnded(int peer, FrameKind kind, const StepLabel& label) const;
  core::Status LostPeer(int peer, const std::string& why, const StepLabel& label) const;
  core::Status AbortOrLost(core::Status status, const WaitSpec& wait) const;
  core::Status Fail(core::Status status);
  void SendControlAndClose(FrameKind kind);

  int rank_;
  int epoch_;
  std::vector<Link> links_;
  std::vector<std::string> hosts_;
  std::string broken_reason_;
  // Reused across Exchange calls so a step allocates nothing.
  std::vector<Transfer> sends_, recvs_;
  std::vector<pollfd> pollfds_;
  std::vector<int> poll_peers_;
  std::vector<std::uint8_t> sending_, receiving_;  // per peer: an unfinished transfer
  std::vector<Clock::time_point> last_heard_;      // per peer: last byte received
};

}  // namespace ccltune::worker::host
