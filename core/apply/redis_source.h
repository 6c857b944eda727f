// Reads one fingerprint's winners from the shared results cache (docs/design.md §4 keys) within a
// deadline: connect, AUTH/SELECT, one pipelined round of ZRANGE over the index keys (and
// SMEMBERS of the fingerprint's epilogues), one round of ZRANGE over those epilogues'
// index keys, one pipelined round of GETRANGE for the selected slices (WinnerTable's
// policy) and every epilogue slice (the runtime's; WinnerTable drops them). Values are
// read with GETRANGE capped just past kMaxRecordBytes, so a huge value costs no more than
// that. Blocks the calling thread for at most about the time left until `deadline` (each
// socket read and write is bounded by it; a server that trickles bytes can stretch it,
// which is why the plugin also runs this on a thread it stops waiting for).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "core/apply/record_parser.h"
#include "core/base/status.h"
#include "core/plan/types.h"

namespace ccltune::apply {

// `url`: redis://[[user]:password@]host[:port][/db]; CCLTUNE_REDIS_PASSWORD overrides the
// URL's password (as for the worker), for the ACL user CCLTUNE_REDIS_USERNAME when set. Records
// that do not parse or do not match their key are counted in `rejected`; connection problems and
// timeouts are errors.
core::Result<ParsedFile> LoadFromRedis(const std::string& url, const std::string& fingerprint,
                                       std::optional<core::Dtype> pinned,
                                       std::chrono::steady_clock::time_point deadline);

}  // namespace ccltune::apply
