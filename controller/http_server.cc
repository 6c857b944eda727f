#include "controller/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <sstream>

namespace ccltune::controller {
namespace {

constexpr size_t kMaxHead = 16 * 1024;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoding of one query component; false for a malformed escape ("%zz", "%4"),
// which the caller answers with 400 (never an exception on a request thread).
bool UrlDecode(const std::string& s, std::string* out) {
  out->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      *out += ' ';
    } else if (s[i] == '%') {
      if (i + 2 >= s.size()) return false;
      const int hi = HexValue(s[i + 1]), lo = HexValue(s[i + 2]);
      if (hi < 0 || lo < 0) return false;
      *out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      *out += s[i];
    }
  }
  return true;
}

const char* Reason(int code) {
  switch (code) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

void WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

}  // namespace

bool ParseRequestLine(const std::string& line, HttpRequest* out) {
  std::istringstream in(line);
  std::string target, version;
  if (!(in >> out->method >> target >> version)) return false;
  if (target.empty() || target[0] != '/') return false;
  auto q = target.find('?');
  out->path = target.substr(0, q);
  if (q == std::string::npos) return true;
  std::istringstream params(target.substr(q + 1));
  std::string kv;
  while (std::getline(params, kv, '&')) {
    const auto eq = kv.find('=');
    std::string key, value;
    if (!UrlDecode(kv.substr(0, eq), &key)) return false;
    if (eq != std::string::npos && !UrlDecode(kv.substr(eq + 1), &value)) return false;
    out->query[key] = value;
  }
  return true;
}

core::Result<std::unique_ptr<HttpServer>> HttpServer::Start(int port, HttpHandler handler) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return core::Unavailable(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd, 512) != 0) {
    std::string err = std::strerror(errno);
    ::close(fd);
    return core::Unavailable("listen on port " + std::to_string(port) + ": " + err);
  }
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return std::unique_ptr<HttpServer>(new HttpServer(fd, ntohs(addr.sin_port), std::move(handler)));
}

constexpr int kServerThreads = 4;

HttpServer::HttpServer(int fd, int port, HttpHandler handler)
    : fd_(fd), port_(port), handler_(std::move(handler)) {
  for (int i = 0; i < kServerThreads; ++i) threads_.emplace_back([this] { Serve(); });
}

HttpServer::~HttpServer() {
  stop_ = true;
  for (auto& t : threads_) t.join();
  ::close(fd_);
}

void HttpServer::Serve() {
  while (!stop_.load()) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;  // wake up to notice stop_
    // The listening socket is non-blocking: several threads wake for one connection and
    // the losers get EAGAIN instead of blocking past stop_. The accepted socket blocks.
    int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) continue;
    HandleConnection(conn);
    ::close(conn);
  }
}

void HttpServer::HandleConnection(int fd) {
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string head;
  char buf[2048];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < kMaxHead) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return;
    head.append(buf, static_cast<size_t>(n));
  }
  HttpRequest req;
  HttpResponse resp;
  if (!ParseRequestLine(head.substr(0, head.find("\r\n")), &req)) {
    resp = {400, "application/json",
            "{\"error\":\"malformed request line or query string (a '%' escape needs two hex "
            "digits)\"}"};
  } else if (req.method != "GET" && req.method != "HEAD") {
    resp = {405, "text/plain", "only GET\n"};
  } else {
    resp = handler_(req);
  }
  std::string out = "HTTP/1.1 " + std::to_string(resp.code) + " " + Reason(resp.code) +
                    "\r\nContent-Type: " + resp.content_type +
                    "\r\nContent-Length: " + std::to_string(resp.body.size()) +
                    "\r\nConnection: close\r\n\r\n";
  if (req.method != "HEAD") out += resp.body;
  WriteAll(fd, out);
}

}  // namespace ccltune::controller
