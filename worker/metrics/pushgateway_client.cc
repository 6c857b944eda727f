#include "worker/metrics/pushgateway_client.h"

#include <charconv>

#include "worker/metrics/socket_io.h"

namespace ccltune::worker {
namespace {

constexpr std::size_t kMaxResponseBytes = 64 * 1024;

bool IsPlainSegmentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

std::string Base64Url(const std::string& in) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v =
        (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
    for (int s : {18, 12, 6, 0}) out += kAlphabet[(v >> s) & 63];
  }
  if (std::size_t rest = in.size() - i; rest > 0) {
    unsigned v = (unsigned char)in[i] << 16 | (rest == 2 ? (unsigned char)in[i + 1] << 8 : 0);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out.empty() ? "=" : out;  // Pushgateway spells an empty value as a lone '='
}

core::Status CheckAnswer(const std::string& answer, const std::string& where) {
  std::string status_line = answer.substr(0, answer.find("\r\n"));
  // "HTTP/1.1 202 Accepted": the code is the second word.
  std::size_t sp = status_line.find(' ');
  int code = 0;
  if (sp != std::string::npos)
    std::from_chars(status_line.data() + sp + 1, status_line.data() + status_line.size(), code);
  if (code >= 200 && code < 300) return core::Status::Ok();
  std::size_t body_at = answer.find("\r\n\r\n");
  std::string body = body_at == std::string::npos ? "" : answer.substr(body_at + 4, 200);
  return core::Unavailable("pushgateway " + where + " answered '" + status_line + "' " + body);
}

}  // namespace

std::string GroupingSegment(const std::string& name, const std::string& value) {
  bool plain = !value.empty();
  for (char c : value) plain = plain && IsPlainSegmentChar(c);
  return plain ? name + "/" + value : name + "@base64/" + Base64Url(value);
}

core::Result<PushgatewayClient> PushgatewayClient::Create(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0)
    return core::InvalidArgument("pushgateway URL '" + url + "' must start with http://");
  std::string rest = url.substr(scheme.size());
  std::size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  std::string prefix = slash == std::string::npos ? "" : rest.substr(slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  std::size_t colon = authority.rfind(':');
  std::string host = authority.substr(0, colon);
  int port = 80;
  if (colon != std::string::npos) {
    std::string p = authority.substr(colon + 1);
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
    if (ec != std::errc() || end != p.data() + p.size() || port <= 0 || port > 65535)
      return core::InvalidArgument("pushgateway URL '" + url + "': bad port '" + p + "'");
  }
  if (host.empty()) return core::InvalidArgument("pushgateway URL '" + url + "' has no host");
  return PushgatewayClient(host, port, prefix);
}

std::string PushgatewayClient::GroupingPath(const std::string& job_id, int rank) const {
  return prefix_ + "/metrics/job/ccltune/" + GroupingSegment("ccltune_job", job_id) + "/" +
         GroupingSegment("rank", std::to_string(rank));
}

core::Status PushgatewayClient::Push(const std::string& job_id, int rank,
                                     const core::Registry& registry, Deadline deadline) const {
  std::string where = host_ + ":" + std::to_string(port_);
  std::string body = core::SerializeText(registry);
  std::string request = "PUT " + GroupingPath(job_id, rank) + " HTTP/1.1\r\nHost: " + where +
                        "\r\nContent-Type: " + core::kTextContentType +
                        "\r\nContent-Length: " + std::to_string(body.size()) +
                        "\r\nConnection: close\r\n\r\n" + body;
  CCLTUNE_ASSIGN_OR_RETURN(net::UniqueFd fd, net::ConnectTcp(host_, port_, deadline));
  CCLTUNE_RETURN_IF_ERROR(net::WriteAll(fd.get(), request, deadline).WithContext("push " + where));
  // Connection: close, so the answer ends at EOF; the cap keeps a confused server harmless.
  auto answer = net::ReadUntil(fd.get(), "", kMaxResponseBytes, deadline);
  if (!answer.ok() && answer.status().code() != core::StatusCode::kFailedPrecondition)
    return answer.status().WithContext("push " + where);
  return answer.ok() ? CheckAnswer(*answer, where)
                     : core::Unavailable("push " + where + ": answer too large");
}

core::Status PushgatewayClient::Push(const std::string& url, const std::string& job_id, int rank,
                                     const core::Registry& registry, Deadline deadline) {
  CCLTUNE_ASSIGN_OR_RETURN(PushgatewayClient client, Create(url));
  return client.Push(job_id, rank, registry, deadline);
}

}  // namespace ccltune::worker
