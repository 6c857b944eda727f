// The direct exchange's protocol and thread (direct_exchange.h).
#include "runtime/direct/direct_exchange.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ccltune::runtime::direct {
namespace {

constexpr std::uint32_t kMagic = 0x43544432;  // "CTD2": version 2 of the messages below
enum class Kind : std::uint32_t { kPost = 1, kGone = 2 };

struct WireRef {
  std::uint64_t segment;
  std::uint64_t offset;
  std::uint32_t handle_bytes;
  std::int32_t fd_index;  // into the datagram's descriptors; -1: none
  char handle[kHandleBytes];
};

// One message. kPost: slot `slot`'s buffers (eligible) or why not (`why`). kGone: segment
// `in.segment` of `rank` no longer exists.
struct Wire {
  std::uint32_t magic;
  Kind kind;
  char token[kTokenBytes];
  std::int32_t rank;
  std::int32_t slot;
  std::uint64_t signature;
  std::uint32_t eligible;
  std::uint32_t unused;
  WireRef in;
  WireRef out;
  char why[160];
};

std::string Bytes(const Wire& w) {
  return std::string(reinterpret_cast<const char*>(&w), sizeof w);
}

void Fill(WireRef* w, std::uint64_t segment, std::uint64_t offset, const Exported* e,
          int fd_index) {
  std::memset(w, 0, sizeof *w);
  w->segment = segment;
  w->offset = offset;
  w->fd_index = fd_index;
  if (e != nullptr) {
    w->handle_bytes = static_cast<std::uint32_t>(e->handle.size());
    std::memcpy(w->handle, e->handle.data(), e->handle.size());
  }
}

// The thread's CUDA calls must not break a capture that the program runs meanwhile.
struct RelaxedCapture {
  RelaxedCapture() { (void)cudaThreadExchangeStreamCaptureMode(&mode); }
  ~RelaxedCapture() { (void)cudaThreadExchangeStreamCaptureMode(&mode); }
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
};

bool Aligned(std::uintptr_t p) { return (p & 15u) == 0; }

}  // namespace

core::Result<std::unique_ptr<DirectExchange>> DirectExchange::Start(
    ExchangeConfig config, std::unique_ptr<DirectBackend> backend) {
  if (config.world < 2 || config.world > kMaxRanks || config.rank < 0 ||
      config.rank >= config.world) {
    return core::InvalidArgument("direct exchange: world 2.." + std::to_string(kMaxRanks));
  }
  if (config.token.size() != kTokenBytes) {
    return core::InvalidArgument("direct exchange: token of " + std::to_string(kTokenBytes) +
                                 " bytes");
  }
  CCLTUNE_ASSIGN_OR_RETURN(UnixChannel channel,
                           UnixChannel::Bind(config.name + "/" + std::to_string(config.rank)));
  return std::unique_ptr<DirectExchange>(
      new DirectExchange(std::move(config), std::move(backend), std::move(channel)));
}

DirectExchange::DirectExchange(ExchangeConfig config, std::unique_ptr<DirectBackend> backend,
                               UnixChannel channel)
    : config_(std::move(config)), backend_(std::move(backend)), channel_(std::move(channel)) {
  listener_ = SegmentRegistry::Get().Listen([this](const Segment& s) { OwnSegmentGone(s); });
  thread_ = std::thread([this] { Loop(); });
}

DirectExchange::~DirectExchange() {
  SegmentRegistry::Get().Unlisten(listener_);
  stop_ = true;
  thread_.join();
  for (const auto& [key, base] : mapped_) backend_->Close(key.first, key.second);
}

std::string DirectExchange::PeerName(int rank) const {
  return config_.name + "/" + std::to_string(rank);
}

int DirectExchange::slots() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(own_.size());
}

std::string DirectExchange::State(int slot) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (slot < 0 || slot >= static_cast<int>(own_.size())) return "no such slot";
  return own_[slot].state;
}

// CCLTUNE_DIRECT_DEBUG=1: each slot's final states on stderr (the GPU test reads them).
void DirectExchange::Log(int slot, const std::string& state) {
  own_[slot].state = state;
  static const bool debug = [] {
    const char* v = std::getenv("CCLTUNE_DIRECT_DEBUG");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  if (debug && state.rfind("waiting", 0) != 0) {
    std::fprintf(stderr, "ccltune: rank %d: direct slot %d: %s\n", config_.rank, slot,
                 state.c_str());
  }
}

const void* DirectExchange::Capture(const CapturedCall& call) {
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int>(own_.size()) >= config_.max_slots) return nullptr;
  Own own;
  own.call = call;
  const std::optional<Segment> in = SegmentRegistry::Get().Find(call.in, call.in_bytes);
  const std::optional<Segment> out = SegmentRegistry::Get().Find(call.out, call.out_bytes);
  if (!call.may_direct) {
    own.why_not = "one-shot in place";
  } else if (!in || !out) {
    own.why_not = "buffer not in a registered segment";
  } else {
    own.in.segment = in->id;
    own.out.segment = out->id;
  }
  const int slot = static_cast<int>(own_.size());
  own_.push_back(std::move(own));
  to_post_.push_back(slot);
  incomplete_.insert(slot);
  return backend_->SlotAddress(slot);
}

void DirectExchange::Loop() {
  // The rank's device before any CUDA call: else this thread would make a context on device 0.
  if (config_.device >= 0) (void)cudaSetDevice(config_.device);
  RelaxedCapture relaxed;
  while (!stop_) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      PostPending();
      SendPending();
    }
    core::Result<std::optional<Datagram>> got = channel_.Receive(std::chrono::milliseconds(2));
    if (!got.ok() || !got->has_value()) continue;
    std::lock_guard<std::mutex> lock(mu_);
    Handle(std::move(**got));
  }
}

void DirectExchange::PostPending() {
  for (int slot : to_post_) Post(slot, own_[slot]);
  to_post_.clear();
}

// Our post of `slot` to every peer: each buffer as its allocation's handle and the offset
// in it. Exports happen here, on this thread (never on the capturing one).
void DirectExchange::Post(int slot, Own& own) {
  Wire w{};
  w.magic = kMagic;
  w.kind = Kind::kPost;
  std::memcpy(w.token, config_.token.data(), kTokenBytes);
  w.rank = config_.rank;
  w.slot = slot;
  w.signature = own.call.signature;
  std::vector<std::uint64_t> fds;
  const Exported* e[2] = {nullptr, nullptr};
  if (own.why_not.empty()) {
    const Segment* seg[2] = {nullptr, nullptr};
    std::optional<Segment> in = SegmentRegistry::Get().Find(own.call.in, own.call.in_bytes);
    std::optional<Segment> out = SegmentRegistry::Get().Find(own.call.out, own.call.out_bytes);
    if (!in || !out || in->id != own.in.segment || out->id != own.out.segment) {
      own.why_not = "segment gone before it was posted";
    } else {
      seg[0] = &*in;
      seg[1] = &*out;
    }
    for (int k = 0; k < 2 && own.why_not.empty(); ++k) {
      auto it = exported_.find(seg[k]->id);
      if (it == exported_.end()) {
        core::Result<Exported> made = backend_->Export(*seg[k]);
        if (made.ok() && made->handle.size() > kHandleBytes) {
          made = core::Internal("a handle of " + std::to_string(made->handle.size()) + " bytes");
        }
        if (!made.ok()) {
          own.why_not = "export: " + made.status().message();
          break;
        }
        it = exported_.emplace(seg[k]->id, std::move(made).value()).first;
      }
      e[k] = &it->second;
    }
  }
  if (own.why_not.empty()) {
    const auto in_at = reinterpret_cast<std::uintptr_t>(own.call.in) - e[0]->allocation_base;
    const auto out_at = reinterpret_cast<std::uintptr_t>(own.call.out) - e[1]->allocation_base;
    own.in.offset = in_at;
    own.out.offset = out_at;
    int next_fd = 0;
    auto fd_of = [&](const Exported* x, std::uint64_t id) {
      if (x->fd.get() < 0) return -1;
      fds.push_back(id);
      return next_fd++;
    };
    w.eligible = 1;
    Fill(&w.in, own.in.segment, in_at, e[0], fd_of(e[0], own.in.segment));
    Fill(&w.out, own.out.segment, out_at, e[1], fd_of(e[1], own.out.segment));
  } else {
    Fill(&w.in, 0, 0, nullptr, -1);
    Fill(&w.out, 0, 0, nullptr, -1);
    std::snprintf(w.why, sizeof w.why, "%s", own.why_not.c_str());
    Log(slot, "staged: " + own.why_not);
  }
  own.posted = true;
  for (int p = 0; p < config_.world; ++p) {
    if (p != config_.rank) Queue(p, Bytes(w), fds);
  }
  TryComplete(slot);
}

void DirectExchange::Queue(int peer, std::string bytes, std::vector<std::uint64_t> segments) {
  outgoing_.push_back({peer, std::move(bytes), std::move(segments),
                       std::chrono::steady_clock::now() + config_.send_deadline});
}

// Sends what is queued, in order per peer; a peer not bound yet is tried again next round
// until the post's deadline (then its slots stay staged on every rank: they wait for us).
void DirectExchange::SendPending() {
  std::set<int> blocked;
  std::vector<Outgoing> left;
  const auto now = std::chrono::steady_clock::now();
  for (Outgoing& o : outgoing_) {
    std::vector<int> fds;
    bool lost = false;
    for (std::uint64_t id : o.segments) {
      auto it = exported_.find(id);
      if (it == exported_.end()) lost = true;  // gone meanwhile: the post would be stale
      if (!lost) fds.push_back(it->second.fd.get());
    }
    if (lost || now > o.deadline) continue;
    if (blocked.count(o.peer) != 0 || !channel_.Send(PeerName(o.peer), o.bytes, fds).ok()) {
      blocked.insert(o.peer);  // keeps this peer's messages in order
      left.push_back(std::move(o));
    }
  }
  outgoing_ = std::move(left);
}

void DirectExchange::Handle(Datagram d) {
  Wire w;
  if (d.bytes.size() != sizeof w) return;
  std::memcpy(&w, d.bytes.data(), sizeof w);
  if (w.magic != kMagic || std::memcmp(w.token, config_.token.data(), kTokenBytes) != 0 ||
      w.rank < 0 || w.rank >= config_.world || w.rank == config_.rank) {
    return;  // not one of ours: dropped
  }
  if (w.kind == Kind::kGone) {
    PeerSegmentGone(w.rank, w.in.segment);
    return;
  }
  if (w.kind != Kind::kPost || w.slot < 0 || w.slot >= config_.max_slots) return;
  Theirs t;
  t.eligible = w.eligible != 0;
  t.why_not = std::string(w.why, strnlen(w.why, sizeof w.why));
  t.signature = w.signature;
  t.in = {w.in.segment, w.in.offset};
  t.out = {w.out.segment, w.out.offset};
  t.in_handle.assign(w.in.handle, std::min<std::size_t>(w.in.handle_bytes, kHandleBytes));
  t.out_handle.assign(w.out.handle, std::min<std::size_t>(w.out.handle_bytes, kHandleBytes));
  auto take = [&](std::int32_t i) {
    return i >= 0 && static_cast<std::size_t>(i) < d.fds.size() ? std::move(d.fds[i])
                                                                : core::UniqueFd();
  };
  t.in_fd = take(w.in.fd_index);
  t.out_fd = take(w.out.fd_index);
  theirs_[w.slot][w.rank] = std::move(t);
  TryComplete(w.slot);
}

std::optional<std::uintptr_t> DirectExchange::Mapped(int rank, const Ref& ref,
                                                     const std::string& handle,
                                                     const core::UniqueFd& fd, std::string* why) {
  const std::pair<int, std::uint64_t> key{rank, ref.segment};
  if (gone_.count(key) != 0) {
    *why = "rank " + std::to_string(rank) + "'s segment is gone";
    return std::nullopt;
  }
  auto it = mapped_.find(key);
  if (it == mapped_.end()) {
    core::Result<std::uintptr_t> base = backend_->Open(rank, ref.segment, handle, fd.get());
    if (!base.ok()) {
      *why = "open rank " + std::to_string(rank) + "'s segment: " + base.status().message();
      return std::nullopt;
    }
    it = mapped_.emplace(key, *base).first;
  }
  return it->second + ref.offset;
}

// Publishes `slot` once every rank posted it: every entry mapped and aligned, or says why
// it stays staged. Only this rank's own state decides its vote.
void DirectExchange::TryComplete(int slot) {
  if (slot >= static_cast<int>(own_.size()) || incomplete_.count(slot) == 0) return;
  Own& own = own_[slot];
  if (!own.posted) return;
  auto& posts = theirs_[slot];
  for (int p = 0; p < config_.world; ++p) {
    if (p != config_.rank && posts.count(p) == 0) {
      if (own.why_not.empty()) Log(slot, "waiting for rank " + std::to_string(p));
      return;
    }
  }
  incomplete_.erase(slot);
  std::map<int, Theirs> done = std::move(posts);
  theirs_.erase(slot);
  if (!own.why_not.empty() || own.withdrawn) return;
  SlotTable table;
  table.in[config_.rank] = reinterpret_cast<std::uintptr_t>(own.call.in);
  table.out[config_.rank] = reinterpret_cast<std::uintptr_t>(own.call.out);
  std::string why;
  for (auto& [p, t] : done) {  // nothing is opened for a slot that stays staged anyway
    if (!t.eligible) why = "rank " + std::to_string(p) + ": " + t.why_not;
    if (why.empty() && t.signature != own.call.signature) {
      why = "rank " + std::to_string(p) + " captured another call in this slot";
    }
    if (!why.empty()) break;
  }
  for (auto& [p, t] : done) {
    if (!why.empty()) break;
    const std::optional<std::uintptr_t> in = Mapped(p, t.in, t.in_handle, t.in_fd, &why);
    const std::optional<std::uintptr_t> out =
        in ? Mapped(p, t.out, t.out_handle, t.out_fd, &why) : std::nullopt;
    if (!in || !out) break;
    table.in[p] = *in;
    table.out[p] = *out;
    uses_[slot].push_back({p, t.in.segment});
    uses_[slot].push_back({p, t.out.segment});
  }
  for (int r = 0; r < config_.world && why.empty(); ++r) {
    if (!Aligned(table.in[r]) || !Aligned(table.out[r])) {
      why = "rank " + std::to_string(r) + "'s buffers are not 16-byte aligned";
    }
  }
  if (why.empty()) {
    const core::Status st = backend_->Publish(slot, table);
    why = st.ok() ? "" : "publish: " + st.message();
  }
  Log(slot, why.empty() ? "ready" : "staged: " + why);
}

// Called by the thread that deregisters (segment_registry.h), before the program can reuse
// the range: every slot of ours that uses it stops vouching now, for good.
void DirectExchange::OwnSegmentGone(const Segment& s) {
  std::lock_guard<std::mutex> lock(mu_);
  RelaxedCapture relaxed;
  for (int slot = 0; slot < static_cast<int>(own_.size()); ++slot) {
    Own& own = own_[slot];
    if (own.withdrawn || !own.why_not.empty()) continue;
    if (own.in.segment != s.id && own.out.segment != s.id) continue;
    own.withdrawn = true;
    const core::Status st = backend_->Withdraw(slot);
    Log(slot, st.ok() ? "staged: withdrawn, segment freed"
                      : "staged: withdrawn, segment freed; clearing failed: " + st.message());
  }
  if (exported_.erase(s.id) == 0) return;  // never posted: no peer holds it
  Wire w{};
  w.magic = kMagic;
  w.kind = Kind::kGone;
  std::memcpy(w.token, config_.token.data(), kTokenBytes);
  w.rank = config_.rank;
  w.slot = -1;
  Fill(&w.in, s.id, 0, nullptr, -1);
  Fill(&w.out, 0, 0, nullptr, -1);
  for (int p = 0; p < config_.world; ++p) {
    if (p != config_.rank) Queue(p, Bytes(w), {});
  }
}

// A peer's segment is gone: it no longer vouches for the slots that used it, so no launch
// reads our mapping any more; withdraw them here too and close it.
void DirectExchange::PeerSegmentGone(int rank, std::uint64_t segment) {
  const std::pair<int, std::uint64_t> key{rank, segment};
  gone_.insert(key);
  for (auto& [slot, used] : uses_) {
    if (own_[slot].withdrawn) continue;
    for (const auto& u : used) {
      if (u != key) continue;
      own_[slot].withdrawn = true;
      (void)backend_->Withdraw(slot);
      Log(slot, "staged: withdrawn, rank " + std::to_string(rank) + "'s segment freed");
      break;
    }
  }
  if (mapped_.erase(key) != 0) backend_->Close(rank, segment);
}

}  // namespace ccltune::runtime::direct
