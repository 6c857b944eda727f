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

TcpMesh::TcpMesh(int rank, int epoch, std::vector<UniqueFd> links,
                 std::vector<std::string> hosts)
    : rank_(rank), epoch_(epoch), hosts_(std::move(hosts)) {
  links_.resize(links.size());
  for (std::size_t p = 0; p < links.size(); ++p) links_[p].fd = std::move(links[p]);
}

TcpMesh::~TcpMesh() {
  if (!broken()) SayGoodbye();
}

void TcpMesh::SayGoodbye() {
  FrameHeader bye;
  bye.kind = FrameKind::kGoodbye;
  for (Link& link : links_) {
    if (!link.fd.valid() || link.eof) continue;
    // Best effort: a full send buffer means the peer is not reading, i.e. not healthy.
    (void)send(link.fd.get(), &bye, sizeof(bye), MSG_DONTWAIT | MSG_NOSIGNAL);
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
  return core::PeerLost(Who(peer) + " disconnected (" + why + "), seen by " + Who(rank_) +
                        " in " + label.ToString());
}

core::Status TcpMesh::Fail(core::Status status) {
  if (!broken()) broken_reason_ = status.ToString();
  return status;
}

long TcpMesh::ReadLink(Link& link, void* dst, std::size_t n) {
  if (link.staged_off < link.staged.size()) {
    const std::size_t m = std::min(n, link.staged.size() - link.staged_off);
    std::memcpy(dst, link.staged.data() + link.staged_off, m);
    link.staged_off += m;
    return static_cast<long>(m);
  }
  if (link.eof) return 0;
  return recv(link.fd.get(), dst, n, MSG_DONTWAIT);
}

bool TcpMesh::StagedEndsWithGoodbye(const Link& link) const {
  std::size_t pos = link.staged_off;
  while (link.staged.size() - pos >= sizeof(FrameHeader)) {
    FrameHeader h;
    std::memcpy(&h, link.staged.data() + pos, sizeof(h));
    if (h.magic != kFrameMagic) return false;
    if (h.kind == FrameKind::kGoodbye) return pos + sizeof(h) == link.staged.size();
    pos += sizeof(h) + h.bytes;
  }
  return false;
}

// The peer hung up while we were not reading from it: read what it left behind (finite,
// it can send no more) and decide whether it exited cleanly or died.
core::Status TcpMesh::HandleHangup(int peer, bool sending, const StepLabel& label) {
  Link& link = links_[peer];
  if (link.staged_off == link.staged.size()) {
    link.staged.clear();
    link.staged_off = 0;
  }
  std::byte buf[65536];
  while (!link.eof) {
    const long r = recv(link.fd.get(), buf, sizeof(buf), MSG_DONTWAIT);
    if (r > 0) {
      link.staged.insert(link.staged.end(), buf, buf + r);
    } else if (r == 0) {
      link.eof = true;
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return core::Status::Ok();  // the rest comes with a later poll
    } else {
      return LostPeer(peer, errno == ECONNRESET ? "connection reset" : ErrnoText(errno), label);
    }
  }
  if (!StagedEndsWithGoodbye(link)) return LostPeer(peer, "connection closed", label);
  link.goodbye = true;
  if (sending) return LostPeer(peer, "it finished and closed while data was due to it", label);
  return core::Status::Ok();
}

}  // namespace ccltune::worker::host
