// TcpMesh lifetime, link reads and peer hang-up handling; the Exchange loop is in
// tcp_mesh_exchange.cc.
#include "worker/host/tcp_mesh.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "worker/host/socket_util.h"

namespace ccltune::worker::host {

std::string StepLabel::ToString() const {
  return std::string(op) + " " + algo + " step " + std::to_string(step);
}

TcpMesh::TcpMesh(int rank, int epoch, std::vector<UniqueFd> links, std::vector<std::string> hosts)
    : rank_(rank), epoch_(epoch), hosts_(std::move(hosts)) {
  links_.resize(links.size());
  for (std::size_t p = 0; p < links.size(); ++p) links_[p].fd = std::move(links[p]);
}

TcpMesh::~TcpMesh() {
  if (!broken()) SendControlAndClose(FrameKind::kGoodbye);
}

void TcpMesh::CloseForRecovery() {
  SendControlAndClose(FrameKind::kRecovering);
  Abandon();
}

// Best effort, bounded: a peer that does not read within 20 ms is not healthy anyway, and
// it then reports PeerLost instead of the reason given here.
void TcpMesh::SendControlAndClose(FrameKind kind) {
  FrameHeader frame;
  frame.kind = kind;
  for (Link& link : links_) {
    if (!link.fd.valid() || link.eof) continue;
    const Deadline until = DeadlineIn(0.02);
    std::size_t sent = 0;
    while (sent < sizeof(frame) && !Expired(until)) {
      const long w = send(link.fd.get(), reinterpret_cast<const char*>(&frame) + sent,
                          sizeof(frame) - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (w > 0) {
        sent += static_cast<std::size_t>(w);
      } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
        pollfd p{link.fd.get(), POLLOUT, 0};
        (void)poll(&p, 1, 5);
      } else {
        break;
      }
    }
    shutdown(link.fd.get(), SHUT_WR);
    // Unread bytes at close() turn the FIN into a RST; read what is already here.
    std::byte sink[4096];
    for (int i = 0; i < 64; ++i) {
      if (recv(link.fd.get(), sink, sizeof(sink), MSG_DONTWAIT) <= 0) break;
    }
  }
}

void TcpMesh::Abandon() {
  for (Link& link : links_) link.fd.reset();
  if (!broken()) broken_reason_ = "abandoned";
}

std::string TcpMesh::Who(int peer) const { return "rank " + std::to_string(peer); }

core::Status TcpMesh::LostPeer(int peer, const std::string& why, const StepLabel& label) const {
  return core::PeerLost(Who(peer) + " disconnected (" + why + "), seen by " + Who(rank_) + " in " +
                        label.ToString());
}

core::Status TcpMesh::Fail(core::Status status) {
  if (!broken()) broken_reason_ = status.ToString();
  return status;
}

long TcpMesh::ReadLink(Link& link, void* dst, std::size_t n) {
  long got = 0;
  if (link.staged_off < link.staged.size()) {
    const std::size_t m = std::min(n, link.staged.size() - link.staged_off);
    std::memcpy(dst, link.staged.data() + link.staged_off, m);
    link.staged_off += m;
    got = static_cast<long>(m);
  } else if (!link.eof) {
    got = recv(link.fd.get(), dst, n, MSG_DONTWAIT);
  }
  if (got > 0) NoteTail(link, static_cast<const std::byte*>(dst), static_cast<std::size_t>(got));
  return got;
}

void TcpMesh::NoteTail(Link& link, const std::byte* data, std::size_t n) {
  constexpr std::size_t kCap = sizeof(FrameHeader);
  if (n >= kCap) {
    std::memcpy(link.tail.data(), data + n - kCap, kCap);
    link.tail_len = kCap;
    return;
  }
  const std::size_t keep = std::min(link.tail_len, kCap - n);
  std::memmove(link.tail.data(), link.tail.data() + link.tail_len - keep, keep);
  std::memcpy(link.tail.data() + keep, data, n);
  link.tail_len = keep + n;
}

FrameKind TcpMesh::FinalControlFrame(const Link& link) const {
  constexpr std::size_t kCap = sizeof(FrameHeader);
  const std::size_t staged = link.staged.size() - link.staged_off;
  std::byte last[kCap];
  if (staged >= kCap) {
    std::memcpy(last, link.staged.data() + link.staged.size() - kCap, kCap);
  } else {
    const std::size_t from_tail = kCap - staged;
    if (link.tail_len < from_tail) return FrameKind::kData;
    std::memcpy(last, link.tail.data() + link.tail_len - from_tail, from_tail);
    std::memcpy(last + from_tail, link.staged.data() + link.staged_off, staged);
  }
  FrameHeader h;
  std::memcpy(&h, last, kCap);
  const bool control = h.kind == FrameKind::kGoodbye || h.kind == FrameKind::kRecovering;
  return h.magic == kFrameMagic && control && h.bytes == 0 ? h.kind : FrameKind::kData;
}

core::Status TcpMesh::PeerEnded(int peer, FrameKind kind, const StepLabel& label) const {
  if (kind == FrameKind::kRecovering) {
    return core::Aborted(Who(peer) + " dropped the mesh of epoch " + std::to_string(epoch_) +
                         " after its collective failed, seen by " + Who(rank_) + " in " +
                         label.ToString());
  }
  if (kind == FrameKind::kGoodbye) {
    return LostPeer(peer, "it finished and closed while " + Who(rank_) + " still needed it", label);
  }
  return LostPeer(peer, "connection closed", label);
}

// Reads what a peer that hung up left behind (finite: it can send no more). True once its
// end of stream (FIN or RST) was seen, false when more may still arrive.
bool TcpMesh::DrainHungUp(Link& link) {
  if (link.staged_off == link.staged.size()) {
    link.staged.clear();
    link.staged_off = 0;
  }
  std::byte buf[65536];
  while (!link.eof) {
    const long r = recv(link.fd.get(), buf, sizeof(buf), MSG_DONTWAIT);
    if (r > 0) {
      link.staged.insert(link.staged.end(), buf, buf + r);
    } else if (r < 0 && errno == EINTR) {
      continue;
    } else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return false;
    } else {
      link.eof = true;  // EOF, or a reset (the bytes before it were still delivered)
    }
  }
  return true;
}

// The peer hung up while we were not reading from it: decide from its last frame whether it
// exited cleanly, dropped the mesh to recover, or died.
core::Status TcpMesh::HandleHangup(int peer, bool sending, const StepLabel& label) {
  Link& link = links_[peer];
  if (!DrainHungUp(link)) return core::Status::Ok();  // the rest comes with a later poll
  const FrameKind last = FinalControlFrame(link);
  if (last != FrameKind::kGoodbye || sending) return PeerEnded(peer, last, label);
  link.goodbye = true;  // a clean exit: only an error if we need this peer again
  return core::Status::Ok();
}

}  // namespace ccltune::worker::host
