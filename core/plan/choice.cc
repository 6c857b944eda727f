// The choice catalog (docs/design.md §5) as data: bases per backend and, per base, the parameters
// it takes with their allowed values. Parsing is strict and canonicalizes values.
#include "core/plan/choice.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <functional>

#include "core/base/sizes.h"

namespace ccltune::core {
namespace {

// A parameter validator returns the canonical value or an error text ("must be ...").
using ParamCheck = std::function<Result<std::string>(const std::string&)>;

struct ParamSpec {
  std::string key;
  ParamCheck check;
};

struct BaseSpec {
  std::string base;
  std::vector<std::string> backends;
  std::vector<ParamSpec> params;
};

ParamCheck OneOf(const std::vector<std::string>& allowed) {
  return [allowed](const std::string& v) -> Result<std::string> {
    if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return v;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : "|") + a;
    return InvalidArgument("must be one of " + list);
  };
}

ParamCheck IntRange(long long lo, long long hi, long long multiple_of = 1) {
  return [=](const std::string& v) -> Result<std::string> {
    long long n = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    const bool ok = !v.empty() && ec == std::errc() && p == v.data() + v.size() && n >= lo &&
                    n <= hi && n % multiple_of == 0;
    if (ok) return std::to_string(n);
    std::string what = "must be an integer " + std::to_string(lo) + ".." + std::to_string(hi);
    if (multiple_of > 1) what += ", a multiple of " + std::to_string(multiple_of);
    return InvalidArgument(what);
  };
}

Result<std::string> PowerOfTwoBytes(const std::string& v) {
  auto bytes = ParseSize(v);
  if (!bytes.ok() || (*bytes & (*bytes - 1)) != 0 || *bytes > (1ull << 30)) {
    return InvalidArgument("must be a power-of-two byte count up to 1GiB (e.g. 65536, 64KiB)");
  }
  return std::to_string(*bytes);
}

const std::vector<BaseSpec>& Catalog() {
  const std::vector<std::string> host{"host"}, nccl{"nccl"}, both{"host", "nccl"};
  const std::vector<ParamSpec> kernel{{"blocks", IntRange(1, 1024)},
                                      {"threads", IntRange(32, 1024, 32)},
                                      {"mode", OneOf({"pull", "push", "ll"})},
                                      {"staged", OneOf({"1"})},
                                      {"unroll", OneOf({"1", "2"})}};
  static const std::vector<BaseSpec> catalog{
      {"ring", host, {}},
      {"recursive-doubling", host, {}},
      {"direct", host, {}},
      {"pairwise", host, {}},
      {"binomial", host, {}},
      {"rs+ag", both, {}},
      {"nccl",
       nccl,
       {{"algo", OneOf({"ring", "tree"})},
        {"proto", OneOf({"ll", "ll128", "simple"})},
        {"ctas", IntRange(1, 64)},
        {"p2pchunk", PowerOfTwoBytes}}},
      {"nccl-reg", nccl, {}},
      {"nccl-symm", nccl, {}},
      {"oneshot", nccl, kernel},
      {"twoshot", nccl, kernel},
      // all-reduce + epilogue in one launch (issue 16): a block per row, no unroll.
      {"oneshot-fused",
       nccl,
       {{"blocks", IntRange(1, 1024)},
        {"threads", IntRange(32, 1024, 32)},
        {"mode", OneOf({"pull", "ll"})}}},
      {"twoshot-fused",
       nccl,
       {{"blocks", IntRange(1, 1024)},
        {"threads", IntRange(32, 1024, 32)},
        {"mode", OneOf({"pull"})}}},
      {"p2p", nccl, kernel},
      // Across nodes (issue 33). NCCL's network transport settings, which NCCL reads once
      // per process (NCCL_SOCKET_NTHREADS <= 16, NCCL_NSOCKS_PERTHREAD, their product <= 64,
      // NCCL_BUFFSIZE, NCCL_IB_QPS_PER_CONNECTION; core/apply/choice_spec.h).
      {"nccl-net",
       nccl,
       {{"socketThreads", IntRange(1, 16)},
        {"socksPerThread", IntRange(1, 64)},
        {"buffSize", PowerOfTwoBytes},
        {"ibQps", IntRange(1, 128)}}},
      // Hierarchical all-reduce: our reduce-scatter inside each node over peer memory, NCCL's
      // all-reduce of each shard across nodes, our all-gather inside the node.
      {"hier", nccl, {{"blocks", IntRange(1, 1024)}, {"threads", IntRange(32, 1024, 32)}}},
      {"ce", nccl, {{"mode", OneOf({"pull", "push"})}}},
      // Hang on purpose (deadline tests); only with CCLTUNE_ENABLE_TEST_CHOICES=1.
      // test-absent: one rank never joins a peer kernel. test-slow (host all-reduce): the ring,
      // reported 10 s an op slower than it ran, so a screening drop is certain. test-pooled and
      // test-fast (host all-reduce): the ring reported 100x and 10x faster than it ran; the
      // first stands for a kernel that needs pooled buffers (apply/any_buffer.h). test-env,
      // test-env-bad (host): measured by rank processes of their own (apply/process_setting.h).
      {"test-hang", both, {}},
      {"test-slow", host, {}},
      {"test-pooled", host, {}},
      {"test-fast", host, {}},
      {"test-env", host, {}},
      {"test-env-bad", host, {}},
      {"test-absent", nccl, {}},
  };
  return catalog;
}

bool TestChoicesEnabled() {
  const char* v = std::getenv("CCLTUNE_ENABLE_TEST_CHOICES");
  return v != nullptr && std::string(v) == "1";
}

bool OnBackend(const BaseSpec& spec, const std::string& backend) {
  if (spec.base.rfind("test-", 0) == 0 && !TestChoicesEnabled()) return false;
  return backend.empty() ||
         std::find(spec.backends.begin(), spec.backends.end(), backend) != spec.backends.end();
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

Status ParseParam(const BaseSpec& spec, const std::string& item, ChoiceName& out) {
  const auto eq = item.find('=');
  std::vector<std::string> keys;
  for (const auto& p : spec.params) keys.push_back(p.key);
  if (eq == std::string::npos || eq == 0) {
    return InvalidArgument("parameter '" + item + "' of '" + spec.base +
                           "' must be key=value (keys: " + Join(keys) + ")");
  }
  const std::string key = item.substr(0, eq);
  const auto it = std::find_if(spec.params.begin(), spec.params.end(),
                               [&](const ParamSpec& p) { return p.key == key; });
  if (it == spec.params.end()) {
    return InvalidArgument("'" + spec.base + "' has no parameter '" + key + "' (" +
                           (keys.empty() ? "it takes none" : "allowed: " + Join(keys)) + ")");
  }
  if (out.params.count(key) != 0) {
    return InvalidArgument("parameter '" + key + "' of '" + spec.base + "' is given twice");
  }
  auto value = it->check(item.substr(eq + 1));
  if (!value.ok()) {
    return InvalidArgument(spec.base + " parameter " + key + "='" + item.substr(eq + 1) + "' " +
                           value.status().message());
  }
  out.params[key] = *value;
  return Status::Ok();
}

}  // namespace

std::string ChoiceName::ToString() const {
  std::string out = base;
  char sep = ':';
  for (const auto& [k, v] : params) {
    out += sep + k + "=" + v;
    sep = ',';
  }
  return out;
}

const std::vector<std::string>& ChoiceBases(const std::string& backend) {
  static const auto build = [](const std::string& b) {
    std::vector<std::string> out;
    for (const auto& spec : Catalog()) {
      const bool listed = b.empty() || std::find(spec.backends.begin(), spec.backends.end(), b) !=
                                           spec.backends.end();
      if (listed && spec.base.rfind("test-", 0) != 0) out.push_back(spec.base);
    }
    return out;
  };
  static const std::vector<std::string> host = build("host"), nccl = build("nccl"), any = build(""),
                                        none;
  if (backend == "host") return host;
  if (backend == "nccl") return nccl;
  return backend.empty() ? any : none;
}

std::string DefaultChoice(const std::string& backend) {
  return backend == "nccl" ? "nccl" : "ring";
}

Result<ChoiceName> ParseChoice(std::string_view text, const std::string& backend) {
  if (!backend.empty() && backend != "host" && backend != "nccl") {
    return InvalidArgument("backend '" + backend + "' is not one of nccl, host");
  }
  const std::string s(text);
  const auto colon = s.find(':');
  ChoiceName out;
  out.base = s.substr(0, colon);
  const auto& catalog = Catalog();
  const auto spec = std::find_if(catalog.begin(), catalog.end(), [&](const BaseSpec& b) {
    return b.base == out.base && OnBackend(b, backend);
  });
  if (spec == catalog.end()) {
    return InvalidArgument("'" + s + "' is not a known choice" +
                           (backend.empty() ? "" : " for backend " + backend) +
                           " (allowed: " + Join(ChoiceBases(backend)) + ")");
  }
  if (colon == std::string::npos) return out;
  std::string rest = s.substr(colon + 1);
  if (rest.empty()) return InvalidArgument("'" + s + "': no parameters after ':'");
  for (std::size_t start = 0; start <= rest.size();) {
    const auto comma = std::min(rest.find(',', start), rest.size());
    CCLTUNE_RETURN_IF_ERROR(ParseParam(*spec, rest.substr(start, comma - start), out));
    start = comma + 1;
  }
  return out;
}

}  // namespace ccltune::core
