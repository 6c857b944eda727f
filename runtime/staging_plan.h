// Where each launch of our kernels finds its staging inside the staging area (dispatch.cc):
// partitions carved in call order, which is the same on every rank, so every rank places a
// launch at the same offset; never freed, because a captured graph keeps the addresses it
// was given. No GPU here: RuntimeComm zeroes what Own() carves and meets the peers.
//
// Two kinds of partition:
// - A signature's own (choice, op, dtype, count), for our push and LL kernels. They write
//   into the peers' staging and rely on two invariants the worker's measurements had, one
//   choice at a time: between two launches of one signature the staging layout is the same,
//   and a staged line's LL flag only grows. So each signature's partition is zeroed on every
//   rank at its first use and never shared: stale flags are then always older, and a launch
//   never writes where a peer still reads another signature's data.
// - One shared by every pull-mode staged launch (the program's input copied in, the output
//   copied out; no push staging). Such a launch reads only what it wrote itself, and its
//   closing barrier is passed only once every peer has read our regions, so the next launch
//   here, whatever its shape, may write them. Before, each size of a training step's
//   reduce-scatters and all-gathers held its own copy of its whole message, and two of them
//   could fill the area. It grows to the largest launch: in place while it is the last
//   partition carved, else anew at the end (the old one stays where graphs captured it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace ccltune::runtime {

// At most this many signatures get a partition of their own (the map stays bounded).
inline constexpr std::size_t kMaxStagingSignatures = 4096;

// Staging partitions and the regions inside them start on 256-byte boundaries.
inline std::uint64_t PartitionAligned(std::uint64_t bytes) {
  constexpr std::uint64_t kAlignment = 256;
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

class StagingPlan {
 public:
  struct Place {
    std::size_t at = 0;  // offset in the staging area
    bool fresh = false;  // carved by this call for a signature: zero it, then meet the peers
  };

  StagingPlan(std::size_t capacity, std::size_t max_signatures)
      : capacity_(capacity), max_signatures_(max_signatures) {}

  // The signature's own partition of `bytes`; none when it no longer fits (the area, or the
  // number of signatures).
  std::optional<Place> Own(const std::string& signature, std::uint64_t bytes);
  // The pull launches' shared partition, grown to `bytes` where needed; none when that does
  // not fit.
  std::optional<Place> Shared(std::uint64_t bytes);

  std::size_t used() const { return used_; }
  std::size_t signatures() const { return own_.size(); }

 private:
  std::optional<std::size_t> Carve(std::uint64_t bytes);

  std::size_t capacity_;
  std::size_t max_signatures_;
  std::size_t used_ = 0;  // bump offset
  std::map<std::string, std::size_t> own_;
  std::size_t shared_at_ = 0;
  std::size_t shared_size_ = 0;  // 0: none carved yet
};

}  // namespace ccltune::runtime
