// The cluster fingerprint (docs/design.md §4): first 16 hex of SHA-256 over canonical JSON of
// what makes results transferable between jobs. The NCCL tuner plugin computes the same.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/base/status.h"

namespace ccltune::core {

struct FingerprintInput {
  std::string backend;    // "nccl" | "host"
  std::string gpu_model;  // "NVIDIA H200", "cpu" for host
  int gpus_per_node = 0;  // ranks per node
  int nodes = 0;
  std::string p2p_summary;   // e.g. "nvlink-full-mesh", "pcie", "tcp-loopback"
  std::string nccl_version;  // "2.28.3", "" for host
  std::string cuda_runtime;  // "13.0", ""
  std::string driver;        // "580.159.04", ""
};

nlohmann::json FingerprintJson(const FingerprintInput& in);        // canonical field order
std::string CanonicalFingerprintJson(const FingerprintInput& in);  // compact, sorted keys
std::string Fingerprint(const FingerprintInput& in);               // 16 lowercase hex
std::string Sha256Hex(const std::string& data);
// A fingerprint a user pins (CCLTUNE_FINGERPRINT, the runtime's config): 1-64 of 0-9, a-z,
// '-', '_' (it becomes part of Redis keys). InvalidArgument naming `source` otherwise.
Status CheckPinnedFingerprint(const std::string& fp, const std::string& source);

}  // namespace ccltune::core
