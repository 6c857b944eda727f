// The one rule for a Pushgateway URL the controller hands to tuning pods: spec.metrics.pushgateway
// and --pushgateway-url (docs/design.md §6). Stricter than the worker's parser on purpose: the
// controller also builds the URLs of the job's groups from it to delete them (core/metrics/
// push_group.h), so only a base URL without credentials, query or fragment is accepted.
#pragma once

#include <string>

#include "core/base/status.h"

namespace ccltune::controller {

// Longest URL accepted (the CRD's maxLength says the same).
inline constexpr std::size_t kMaxPushgatewayUrl = 2048;

// OK for "http[s]://host[:port][/path]" (host: a DNS name, an IPv4 address or [IPv6]; port
// 1..65535; path of [A-Za-z0-9._~-] segments, a trailing slash allowed). InvalidArgument that
// begins with `field` otherwise; a URL holding '@' is never echoed (it may carry a password).
core::Status CheckPushgatewayUrl(const std::string& url, const std::string& field);

// The URL without its trailing slashes, so that a group's path can be appended.
std::string PushgatewayBase(const std::string& url);

}  // namespace ccltune::controller
