// redis:// URL parsing (RedisEndpoint). Kept apart from the client so it is testable and
// usable without a connection.
#include <cctype>
#include <charconv>
#include <string>

#include "core/redis/redis_client.h"

namespace ccltune::core {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Passwords in URLs are percent-encoded (a Secret may hold '@' or ':').
Result<std::string> PercentDecode(const std::string& in, const char* field) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out += in[i];
      continue;
    }
    const int hi = i + 1 < in.size() ? HexValue(in[i + 1]) : -1;
    const int lo = i + 2 < in.size() ? HexValue(in[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return InvalidArgument(std::string("redis URL: bad percent-encoding in ") + field +
                             " (use %XX with two hex digits)");
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

Result<int> ParseIntField(const std::string& text, int lo, int hi, const char* field) {
  int v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end || v < lo || v > hi) {
    return InvalidArgument("redis URL: " + std::string(field) + " '" + text +
                           "' is not allowed (must be an integer " + std::to_string(lo) + ".." +
                           std::to_string(hi) + ")");
  }
  return v;
}

// Stores credentials in the RedisEndpoint::password convention: "user:password" for an
// ACL user, ":password" when the password itself holds ':' and there is no user.
Status ParseUserInfo(const std::string& userinfo, RedisEndpoint& ep) {
  const auto colon = userinfo.find(':');
  if (colon == std::string::npos) {  // "user@host" has no password: say so, do not guess
    return InvalidArgument("redis URL: credentials must be ':password' or 'user:password'");
  }
  std::string user = colon == std::string::npos ? "" : userinfo.substr(0, colon);
  std::string pass = colon == std::string::npos ? userinfo : userinfo.substr(colon + 1);
  CCLTUNE_ASSIGN_OR_RETURN(user, PercentDecode(user, "user"));
  CCLTUNE_ASSIGN_OR_RETURN(pass, PercentDecode(pass, "password"));
  if (pass.empty()) return InvalidArgument("redis URL: empty password after '@'");
  if (!user.empty()) {
    ep.password = user + ":" + pass;
  } else {
    ep.password = pass.find(':') == std::string::npos ? pass : ":" + pass;
  }
  return Status::Ok();
}

Status ParseHostPort(const std::string& hostport, RedisEndpoint& ep) {
  std::string host = hostport;
  std::string port;
  if (!host.empty() && host[0] == '[') {  // IPv6 literal: [::1]:6379
    const auto close = host.find(']');
    if (close == std::string::npos) return InvalidArgument("redis URL: unclosed '[' in host");
    if (close + 1 < host.size()) {
      if (host[close + 1] != ':') return InvalidArgument("redis URL: junk after ']' in host");
      port = host.substr(close + 2);
    }
    host = host.substr(1, close - 1);
  } else if (const auto colon = host.rfind(':'); colon != std::string::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  if (host.empty()) return InvalidArgument("redis URL: host is empty");
  ep.host = host;
  if (!port.empty() || hostport.ends_with(":")) {
    CCLTUNE_ASSIGN_OR_RETURN(ep.port, ParseIntField(port, 1, 65535, "port"));
  }
  return Status::Ok();
}

}  // namespace

std::string RedisEndpoint::ToString() const {
  const bool v6 = host.find(':') != std::string::npos;
  return "redis://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/" +
         std::to_string(db);
}

Result<RedisEndpoint> ParseRedisUrl(const std::string& url) {
  if (url.starts_with("rediss://")) {
    return InvalidArgument("redis URL: rediss:// (TLS) is not supported; use redis://");
  }
  if (!url.starts_with("redis://")) {
    return InvalidArgument("redis URL: must start with redis:// (got '" +
                           url.substr(0, url.find("://")) + "')");
  }
  std::string rest = url.substr(8);
  RedisEndpoint ep;
  if (const auto at = rest.rfind('@'); at != std::string::npos) {
    CCLTUNE_RETURN_IF_ERROR(ParseUserInfo(rest.substr(0, at), ep));
    rest = rest.substr(at + 1);
  }
  std::string db;
  if (const auto slash = rest.find('/'); slash != std::string::npos) {
    db = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
  }
  if (db.find('?') != std::string::npos) {
    return InvalidArgument("redis URL: query parameters are not supported");
  }
  CCLTUNE_RETURN_IF_ERROR(ParseHostPort(rest, ep));
  if (!db.empty()) {
    CCLTUNE_ASSIGN_OR_RETURN(ep.db, ParseIntField(db, 0, 15, "db"));
  }
  return ep;
}

std::vector<std::string> AuthArgv(const RedisEndpoint& ep) {
  if (ep.password.empty()) return {};
  const auto colon = ep.password.find(':');
  if (colon == std::string::npos) return {"AUTH", ep.password};
  if (colon == 0) return {"AUTH", ep.password.substr(1)};  // ":pa:ss", no user
  return {"AUTH", ep.password.substr(0, colon), ep.password.substr(colon + 1)};
}

void ApplyRedisCredentials(const char* username, const char* password, RedisEndpoint* ep) {
  if (password == nullptr || *password == '\0') return;
  const std::string pw(password);
  // A password with ':' and no user must not read as "user:password" (see AuthArgv).
  ep->password = username != nullptr && *username != '\0' ? std::string(username) + ":" + pw
                 : pw.find(':') == std::string::npos      ? pw
                                                          : ":" + pw;
}

}  // namespace ccltune::core
