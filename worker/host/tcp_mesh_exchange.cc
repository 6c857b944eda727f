// The progress engine: TcpMesh::Exchange and the non-blocking send/receive pumps.
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <thread>

#include "worker/host/socket_util.h"
#include "worker/host/tcp_mesh.h"

namespace ccltune::worker::host {
namespace {

constexpr std::size_t kHeader = sizeof(FrameHeader);
constexpr int kPollSliceMs = 50;
// Four polls of the abort flag by JobControl's watcher (every 0.25 s).
constexpr double kAbortGraceSeconds = 1.0;

bool Finished(const TcpMesh::Transfer& t) { return t.done == kHeader + t.bytes; }

// " (no data from rank 1 for 2.5 s in this step)", or nothing for a wait too short to tell.
std::string Silence(const std::string& what, double seconds) {
  if (seconds < 0.1) return "";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", seconds);
  return " (" + what + " for " + buf + " in this step)";
}

}  // namespace

core::Status TcpMesh::Exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs,
                               std::uint32_t seq, std::uint32_t step, const WaitSpec& wait) {
  if (broken()) {
    return core::FailedPrecondition(Who(rank_) + ": host mesh of epoch " + std::to_string(epoch_) +
                                    " is broken (" + broken_reason_ + "); Recover() first");
  }
  CCLTUNE_RETURN_IF_ERROR(Post(sends, recvs, seq, step));
  const Clock::time_point start = Clock::now();
  std::fill(last_heard_.begin(), last_heard_.end(), start);
  for (;;) {
    bool progressed = false;
    bool done = false;
    core::Status st = Pass(wait, seq, step, progressed, done);
    if (!st.ok()) return Fail(AbortOrLost(st, wait));
    if (done) return core::Status::Ok();
    if (!progressed) {
      st = PollOnce(wait);
      if (!st.ok()) return Fail(AbortOrLost(st, wait));
    }
    st = CheckWait(wait, start);
    if (!st.ok()) return Fail(st);
  }
}

core::Status TcpMesh::Post(std::span<const SendOp> sends, std::span<const RecvOp> recvs,
                           std::uint32_t seq, std::uint32_t step) {
  const int world = world_size();
  sends_.clear();
  recvs_.clear();
  for (const SendOp& op : sends) {
    if (op.peer < 0 || op.peer >= world || op.peer == rank_) {
      return core::Internal(Who(rank_) + ": send to invalid peer " + std::to_string(op.peer));
    }
    Transfer t{op.peer, static_cast<std::byte*>(const_cast<void*>(op.data)), op.bytes};
    t.header = FrameHeader{kFrameMagic, FrameKind::kData, seq, step, op.bytes};
    sends_.push_back(t);
  }
  for (const RecvOp& op : recvs) {
    if (op.peer < 0 || op.peer >= world || op.peer == rank_) {
      return core::Internal(Who(rank_) + ": receive from invalid peer " + std::to_string(op.peer));
    }
    recvs_.push_back(Transfer{op.peer, static_cast<std::byte*>(op.data), op.bytes});
  }
  sending_.assign(world, 0);
  receiving_.assign(world, 0);
  last_heard_.resize(world);
  return core::Status::Ok();
}

// One non-blocking sweep over every posted transfer; per peer, only the oldest unfinished
// send and receive may move (TCP keeps a peer's messages in order). `done` when none is left.
core::Status TcpMesh::Pass(const WaitSpec& wait, std::uint32_t seq, std::uint32_t step,
                           bool& progressed, bool& done) {
  std::fill(sending_.begin(), sending_.end(), 0);
  std::fill(receiving_.begin(), receiving_.end(), 0);
  done = true;
  for (Transfer& t : sends_) {
    if (!Finished(t) && !sending_[t.peer])
      CCLTUNE_RETURN_IF_ERROR(PumpSend(t, wait.label, progressed));
    if (Finished(t)) continue;
    done = false;
    sending_[t.peer] = 1;  // later transfers to this peer wait their turn
  }
  for (Transfer& t : recvs_) {
    if (!Finished(t) && !receiving_[t.peer])
      CCLTUNE_RETURN_IF_ERROR(PumpRecv(t, seq, step, wait.label, progressed));
    if (Finished(t)) continue;
    done = false;
    receiving_[t.peer] = 1;  // later transfers to this peer wait their turn
  }
  return core::Status::Ok();
}

// Waits up to 50 ms for readiness. Peers we are not reading from are watched for hang-up
// only (POLLRDHUP), so a crashed rank is noticed even while we wait on someone else.
core::Status TcpMesh::PollOnce(const WaitSpec& wait) {
  pollfds_.clear();
  poll_peers_.clear();
  for (int p = 0; p < world_size(); ++p) {
    const Link& link = links_[p];
    if (p == rank_ || !link.fd.valid() || link.eof) continue;
    short events = POLLRDHUP;
    if (receiving_[p]) events |= POLLIN;
    if (sending_[p]) events |= POLLOUT;
    pollfds_.push_back(pollfd{link.fd.get(), events, 0});
    poll_peers_.push_back(p);
  }
  const double left_ms = SecondsLeft(wait.deadline) * 1000;
  const int timeout = static_cast<int>(std::clamp(left_ms, 0.0, double{kPollSliceMs}));
  const int n = poll(pollfds_.data(), pollfds_.size(), timeout);
  if (n < 0 && errno != EINTR) return core::Internal("poll: " + ErrnoText(errno));
  for (std::size_t i = 0; n > 0 && i < pollfds_.size(); ++i) {
    const int p = poll_peers_[i];
    const bool hangup = pollfds_[i].revents & (POLLRDHUP | POLLHUP | POLLERR);
    // A peer we read from reports its EOF through the receive pump itself.
    if (hangup && !receiving_[p]) {
      CCLTUNE_RETURN_IF_ERROR(HandleHangup(p, sending_[p] != 0, wait.label));
    }
  }
  return core::Status::Ok();
}

// A peer that closed without its control frame may be one whose choice timed out and that
// dropped the mesh mid-transfer: its kRecovering frame is lost when it closes with our data
// still unread (the close then sends a reset). It raised the epoch's abort flag first, which
// this rank's token shows within a watcher poll; so wait that long before calling the peer
// lost, and a choice timeout stays a timeout (the job goes on) instead of failing the job.
core::Status TcpMesh::AbortOrLost(core::Status status, const WaitSpec& wait) const {
  if (status.code() != core::StatusCode::kPeerLost || wait.cancel == nullptr) return status;
  const Deadline until = DeadlineIn(kAbortGraceSeconds);
  while (!Expired(until)) {
    const core::Status st = wait.cancel->Check();
    if (!st.ok()) {
      return core::Status(
          st.code(), Who(rank_) + ": stopped in " + wait.label.ToString() + ": " + st.message());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status;
}

core::Status TcpMesh::CheckWait(const WaitSpec& wait, Clock::time_point start) const {
  if (wait.cancel != nullptr) {
    const core::Status st = wait.cancel->Check();
    if (!st.ok()) {
      return core::Status(
          st.code(), Who(rank_) + ": stopped in " + wait.label.ToString() + ": " + st.message());
    }
  }
  if (!Expired(wait.deadline)) return core::Status::Ok();
  // The deadline is the caller's (a whole choice's, often) and may pass just as a step began:
  // a silence is told only when there was one, and as this step's.
  const Clock::time_point now = Clock::now();
  const std::string passed = Who(rank_) + ": deadline passed in " + wait.label.ToString();
  for (int p = 0; p < world_size(); ++p) {
    if (!receiving_[p]) continue;
    const double idle =
        std::chrono::duration<double>(now - std::max(start, last_heard_[p])).count();
    return core::TimeoutError(passed + " while waiting for data from " + Who(p) +
                              Silence("no data from " + Who(p), idle));
  }
  for (int p = 0; p < world_size(); ++p) {
    if (!sending_[p]) continue;
    return core::TimeoutError(
        passed + " while sending to " + Who(p) +
        Silence("sending", std::chrono::duration<double>(now - start).count()));
  }
  return core::TimeoutError(passed);
}

core::Status TcpMesh::PumpSend(Transfer& t, const StepLabel& label, bool& progressed) {
  const std::size_t total = kHeader + t.bytes;
  const int fd = links_[t.peer].fd.get();
  while (t.done < total) {
    iovec iov[2];
    int n = 0;
    if (t.done < kHeader) {
      iov[n++] = {reinterpret_cast<std::byte*>(&t.header) + t.done, kHeader - t.done};
      if (t.bytes > 0) iov[n++] = {t.data, t.bytes};
    } else {
      iov[n++] = {t.data + (t.done - kHeader), total - t.done};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = n;
    const long w = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      t.done += static_cast<std::size_t>(w);
      progressed = true;
    } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return core::Status::Ok();
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else {
      if (errno != EPIPE && errno != ECONNRESET) return LostPeer(t.peer, ErrnoText(errno), label);
      // The peer is gone; its last frame (if any) says why.
      Link& link = links_[t.peer];
      DrainHungUp(link);
      return PeerEnded(t.peer, FinalControlFrame(link), label);
    }
  }
  return core::Status::Ok();
}

core::Status TcpMesh::PumpRecv(Transfer& t, std::uint32_t seq, std::uint32_t step,
                               const StepLabel& label, bool& progressed) {
  const std::size_t total = kHeader + t.bytes;
  Link& link = links_[t.peer];
  while (t.done < total) {
    const long r =
        t.done < kHeader
            ? ReadLink(link, reinterpret_cast<std::byte*>(&t.header) + t.done, kHeader - t.done)
            : ReadLink(link, t.data + (t.done - kHeader), total - t.done);
    if (r > 0) {
      t.done += static_cast<std::size_t>(r);
      progressed = true;
      last_heard_[t.peer] = Clock::now();
      if (t.done == kHeader) CCLTUNE_RETURN_IF_ERROR(CheckHeader(t, seq, step, label));
    } else if (r == 0 || (r < 0 && errno == ECONNRESET)) {
      // Bytes before a reset are delivered first, so the stream's end is all we have.
      link.eof = true;
      return PeerEnded(t.peer, FinalControlFrame(link), label);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return core::Status::Ok();
    } else if (errno != EINTR) {
      return LostPeer(t.peer, ErrnoText(errno), label);
    }
  }
  return core::Status::Ok();
}

core::Status TcpMesh::CheckHeader(const Transfer& t, std::uint32_t seq, std::uint32_t step,
                                  const StepLabel& label) const {
  const FrameHeader& h = t.header;
  if (h.magic == kFrameMagic && h.kind != FrameKind::kData) return PeerEnded(t.peer, h.kind, label);
  if (h.magic != kFrameMagic || h.kind != FrameKind::kData || h.seq != seq || h.step != step ||
      h.bytes != t.bytes) {
    return core::Internal(Who(rank_) + ": out-of-order message from " + Who(t.peer) + " in " +
                          label.ToString() + ": got seq " + std::to_string(h.seq) + " step " +
                          std::to_string(h.step) + " (" + std::to_string(h.bytes) +
                          " bytes), want seq " + std::to_string(seq) + " step " +
                          std::to_string(step) + " (" + std::to_string(t.bytes) + " bytes)");
  }
  return core::Status::Ok();
}

}  // namespace ccltune::worker::host
