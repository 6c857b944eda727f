#include "worker/host/mesh_setup.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <random>
#include <vector>

#include "worker/host/socket_util.h"

namespace ccltune::worker::host {
namespace {

constexpr int kPollSliceMs = 50;

std::uint64_t RandomNonce() {
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}

// One connection being set up: outgoing (we connect, send hello, read the answer) or
// incoming (we read a hello, answer it). `peer` is known up front only for outgoing ones.
struct Pending {
  UniqueFd fd;
  bool outgoing = false;
  bool connected = false;
  int peer = -1;
  Hello out;
  std::size_t out_done = 0;
  bool out_ready = false;  // `out` holds what to send
  Hello in;
  std::size_t in_done = 0;
};

enum class Progress { kWaiting, kDone, kDrop };

class MeshSetup {
 public:
  MeshSetup(const MeshConfig& c, const CancelToken& cancel, Deadline d)
      : cfg_(c), cancel_(cancel), deadline_(d), links_(c.world) {}
  core::Result<std::unique_ptr<TcpMesh>> Run(PeerDirectory& directory);

 private:
  core::Status PublishAndRead(PeerDirectory& directory);
  core::Status StartConnects();
  core::Status Loop();
  core::Status AcceptAll();
  core::Result<Progress> Advance(Pending& p, short revents);
  core::Result<Progress> WriteHello(Pending& p);
  core::Result<Progress> ReadHello(Pending& p);
  core::Result<Progress> Finish(Pending& p);
  core::Status TimedOut() const;
  std::string Me() const { return "rank " + std::to_string(cfg_.rank); }
  int Connected() const {
    return static_cast<int>(
        std::count_if(links_.begin(), links_.end(), [](const UniqueFd& f) { return f.valid(); }));
  }

  MeshConfig cfg_;
  const CancelToken& cancel_;
  Deadline deadline_;
  UniqueFd listener_;
  std::uint64_t nonce_ = RandomNonce();
  std::vector<PeerAddress> addrs_;
  std::vector<UniqueFd> links_;
  std::vector<Pending> pending_;
};

core::Result<std::unique_ptr<TcpMesh>> MeshSetup::Run(PeerDirectory& directory) {
  CCLTUNE_ASSIGN_OR_RETURN(listener_, ListenTcp(cfg_.listen_host, cfg_.world + 16));
  CCLTUNE_RETURN_IF_ERROR(PublishAndRead(directory));
  CCLTUNE_RETURN_IF_ERROR(StartConnects());
  CCLTUNE_RETURN_IF_ERROR(Loop());
  std::vector<std::string> hosts;
  for (const PeerAddress& a : addrs_) hosts.push_back(a.host);
  return std::make_unique<TcpMesh>(cfg_.rank, cfg_.epoch, std::move(links_), std::move(hosts));
}

core::Status MeshSetup::PublishAndRead(PeerDirectory& directory) {
  CCLTUNE_ASSIGN_OR_RETURN(const int port, LocalPort(listener_.get()));
  const PeerAddress mine{cfg_.listen_host, port, nonce_};
  auto all = directory.AllGather(DirectoryName(cfg_.epoch), mine.ToString(), deadline_);
  if (!all.ok()) return all.status().WithContext(Me() + ": host mesh address exchange");
  if (static_cast<int>(all->size()) != cfg_.world) {
    return core::Internal(Me() + ": address exchange returned " + std::to_string(all->size()) +
                          " entries for world size " + std::to_string(cfg_.world));
  }
  for (const std::string& text : *all) {
    CCLTUNE_ASSIGN_OR_RETURN(PeerAddress a, ParsePeerAddress(text));
    addrs_.push_back(std::move(a));
  }
  return core::Status::Ok();
}

core::Status MeshSetup::StartConnects() {
  for (int peer = cfg_.rank + 1; peer < cfg_.world; ++peer) {
    auto fd = StartConnect(addrs_[peer].host, addrs_[peer].port);
    if (!fd.ok())
      return core::PeerLost("rank " + std::to_string(peer) +
                            " unreachable: " + fd.status().message());
    Pending p;
    p.fd = std::move(fd).value();
    p.outgoing = true;
    p.peer = peer;
    p.out = Hello{kHelloMagic, kWireVersion,       0,     cfg_.rank, peer,
                  cfg_.epoch,  addrs_[peer].nonce, nonce_};
    p.out_ready = true;
    pending_.push_back(std::move(p));
  }
  return core::Status::Ok();
}

core::Status MeshSetup::Loop() {
  std::vector<pollfd> fds;
  while (Connected() < cfg_.world - 1) {
    fds.assign(1, pollfd{listener_.get(), POLLIN, 0});
    for (const Pending& p : pending_) {
      const bool writing = !p.connected || (p.out_ready && p.out_done < sizeof(Hello));
      fds.push_back(pollfd{p.fd.get(), static_cast<short>(writing ? POLLOUT : POLLIN), 0});
    }
    const int timeout =
        static_cast<int>(std::clamp(SecondsLeft(deadline_) * 1000, 0.0, double{kPollSliceMs}));
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      return core::Internal(Me() + ": poll: " + ErrnoText(errno));
    }
    if (fds[0].revents) CCLTUNE_RETURN_IF_ERROR(AcceptAll());
    // Walk backwards so erasing keeps the indices of fds[] and pending_ aligned.
    for (std::size_t i = std::min(fds.size() - 1, pending_.size()); i-- > 0;) {
      if (fds[i + 1].revents == 0) continue;
      CCLTUNE_ASSIGN_OR_RETURN(const Progress pr, Advance(pending_[i], fds[i + 1].revents));
      if (pr != Progress::kWaiting) pending_.erase(pending_.begin() + static_cast<long>(i));
    }
    const core::Status st = cancel_.Check();
    if (!st.ok()) return st.WithContext(Me() + ": host mesh setup");
    if (Expired(deadline_) && Connected() < cfg_.world - 1) return TimedOut();
  }
  return core::Status::Ok();
}

core::Status MeshSetup::AcceptAll() {
  for (;;) {
    CCLTUNE_ASSIGN_OR_RETURN(UniqueFd fd, AcceptOne(listener_.get()));
    if (!fd.valid()) return core::Status::Ok();
    Pending p;
    p.fd = std::move(fd);
    p.connected = true;
    pending_.push_back(std::move(p));
  }
}

core::Result<Progress> MeshSetup::Advance(Pending& p, short revents) {
  if (p.outgoing && !p.connected) {
    const int err = SocketError(p.fd.get());
    if (err != 0) {
      return core::PeerLost("rank " + std::to_string(p.peer) + " unreachable at " +
                            addrs_[p.peer].host + ":" + std::to_string(addrs_[p.peer].port) + ": " +
                            ErrnoText(err));
    }
    if (!(revents & POLLOUT)) return Progress::kWaiting;
    p.connected = true;
  }
  if (p.out_ready && p.out_done < sizeof(Hello)) return WriteHello(p);
  return ReadHello(p);
}

core::Result<Progress> MeshSetup::WriteHello(Pending& p) {
  const long w = send(p.fd.get(), reinterpret_cast<const char*>(&p.out) + p.out_done,
                      sizeof(Hello) - p.out_done, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (w < 0 && (errno == EAGAIN || errno == EINTR)) return Progress::kWaiting;
  if (w <= 0) {
    if (!p.outgoing) return Progress::kDrop;
    return core::PeerLost("rank " + std::to_string(p.peer) +
                          " dropped the connection: " + ErrnoText(errno));
  }
  p.out_done += static_cast<std::size_t>(w);
  if (p.out_done < sizeof(Hello)) return Progress::kWaiting;
  // The acceptor is done once its answer is out; the connector now waits for that answer.
  return p.outgoing ? Progress::kWaiting : Finish(p);
}

core::Result<Progress> MeshSetup::ReadHello(Pending& p) {
  const long r = recv(p.fd.get(), reinterpret_cast<char*>(&p.in) + p.in_done,
                      sizeof(Hello) - p.in_done, MSG_DONTWAIT);
  if (r < 0 && (errno == EAGAIN || errno == EINTR)) return Progress::kWaiting;
  if (r <= 0) {
    if (!p.outgoing) return Progress::kDrop;  // a stray that gave up
    return core::PeerLost("rank " + std::to_string(p.peer) +
                          " closed the connection during "
                          "mesh setup (epoch " +
                          std::to_string(cfg_.epoch) + ")");
  }
  p.in_done += static_cast<std::size_t>(r);
  if (p.in_done < sizeof(Hello)) return Progress::kWaiting;
  const HelloExpect expect{cfg_.rank, cfg_.epoch, nonce_};
  core::Status st = CheckHello(p.in, expect);
  const int from = p.in.from;
  const bool from_ok = p.outgoing ? from == p.peer : (from >= 0 && from < cfg_.rank);
  if (st.ok() && (!from_ok || p.in.nonce != addrs_[from].nonce || links_[from].valid())) {
    st = core::InvalidArgument("hello claims to be rank " + std::to_string(from));
  }
  if (!st.ok()) {
    if (!p.outgoing) return Progress::kDrop;  // stray or stale connection: not a peer
    return core::Internal(Me() + ": rank " + std::to_string(p.peer) +
                          " answered with a bad "
                          "hello: " +
                          st.message());
  }
  if (p.outgoing) return Finish(p);
  p.peer = from;
  p.out = Hello{kHelloMagic, kWireVersion, 0, cfg_.rank, from, cfg_.epoch, p.in.nonce, nonce_};
  p.out_ready = true;
  return WriteHello(p);
}

core::Result<Progress> MeshSetup::Finish(Pending& p) {
  links_[p.peer] = std::move(p.fd);
  return Progress::kDone;
}

core::Status MeshSetup::TimedOut() const {
  std::string missing;
  for (int peer = 0; peer < cfg_.world; ++peer) {
    if (peer == cfg_.rank || links_[peer].valid()) continue;
    missing += (missing.empty() ? "" : ", ") + std::to_string(peer);
  }
  return core::TimeoutError(Me() + ": host mesh setup (epoch " + std::to_string(cfg_.epoch) +
                            ") timed out; no connection with rank(s) " + missing);
}

}  // namespace

std::string PeerAddress::ToString() const {
  char nonce_hex[17];
  std::snprintf(nonce_hex, sizeof(nonce_hex), "%016llx", static_cast<unsigned long long>(nonce));
  return host + "," + std::to_string(port) + "," + nonce_hex;
}

core::Result<PeerAddress> ParsePeerAddress(const std::string& text) {
  const std::size_t a = text.find(',');
  const std::size_t b = a == std::string::npos ? a : text.find(',', a + 1);
  if (b == std::string::npos) {
    return core::DataLoss("host mesh address '" + text + "' is not host,port,nonce");
  }
  PeerAddress out;
  out.host = text.substr(0, a);
  try {
    out.port = std::stoi(text.substr(a + 1, b - a - 1));
    out.nonce = std::stoull(text.substr(b + 1), nullptr, 16);
  } catch (const std::exception&) {
    return core::DataLoss("host mesh address '" + text + "' has a bad port or nonce");
  }
  return out;
}

std::string DirectoryName(int epoch) { return "host-addr-" + std::to_string(epoch); }

core::Result<std::unique_ptr<TcpMesh>> BuildTcpMesh(const MeshConfig& config,
                                                    PeerDirectory& directory,
                                                    const CancelToken& cancel, Deadline deadline) {
  if (config.world < 1 || config.rank < 0 || config.rank >= config.world) {
    return core::InvalidArgument("host mesh: rank " + std::to_string(config.rank) +
                                 " outside world size " + std::to_string(config.world));
  }
  MeshSetup setup(config, cancel, deadline);
  return setup.Run(directory);
}

}  // namespace ccltune::worker::host
