#include "worker/metrics/metrics_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ccltune::worker {
namespace {

std::string HttpResponse(const std::string& status, const std::string& content_type,
                         const std::string& body, bool include_body,
                         const std::string& extra_headers = "") {
  std::string out = "HTTP/1.1 " + status + "\r\nContent-Type: " + content_type +
                    "\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nConnection: close\r\n" + extra_headers + "\r\n";
  if (include_body) out += body;
  return out;
}

core::Result<net::UniqueFd> Listen(const std::string& address, int port, int& bound_port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1)
    return core::InvalidArgument("metrics bind address '" + address + "' is not an IPv4 address");
  net::UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return core::Internal(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  // A restarted worker must get its port back while old connections sit in TIME_WAIT.
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0 ||
      listen(fd.get(), 16) < 0)
    return core::Unavailable("metrics server " + address + ":" + std::to_string(port) + ": " +
                             std::strerror(errno));
  socklen_t len = sizeof(addr);
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  bound_port = ntohs(addr.sin_port);
  return fd;
}

}  // namespace

core::Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(const core::Registry& registry,
                                                                  const Options& options) {
  return Start([&registry] { return core::SerializeText(registry); }, options);
}

core::Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(Render render,
                                                                  const Options& options) {
  int bound_port = 0;
  CCLTUNE_ASSIGN_OR_RETURN(net::UniqueFd listener,
                           Listen(options.bind_address, options.port, bound_port));
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) < 0)
    return core::Internal(std::string("pipe: ") + std::strerror(errno));
  return std::unique_ptr<MetricsServer>(
      new MetricsServer(std::move(render), options, std::move(listener), bound_port,
                        net::UniqueFd(pipe_fds[0]), net::UniqueFd(pipe_fds[1])));
}

MetricsServer::MetricsServer(Render render, const Options& options, net::UniqueFd listener,
                             int port, net::UniqueFd wake_read, net::UniqueFd wake_write)
    : render_(std::move(render)),
      options_(options),
      listener_(std::move(listener)),
      port_(port),
      wake_read_(std::move(wake_read)),
      wake_write_(std::move(wake_write)),
      thread_([this] { Serve(); }) {}

MetricsServer::~MetricsServer() {
  char byte = 0;
  (void)!write(wake_write_.get(), &byte, 1);
  if (thread_.joinable()) thread_.join();
}

void MetricsServer::Serve() {
  for (;;) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
    int n = poll(fds, 2, -1);  // no deadline needed: the destructor always wakes us
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || fds[1].revents != 0) return;
    if (!(fds[0].revents & POLLIN)) continue;
    net::UniqueFd conn(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (conn.valid()) HandleConnection(conn.get());
  }
}

void MetricsServer::HandleConnection(int fd) const {
  Deadline deadline = DeadlineIn(options_.io_timeout_seconds);
  auto request = net::ReadUntil(fd, "\r\n\r\n", options_.max_request_bytes, deadline);
  std::string response;
  if (request.ok()) {
    response = Respond(*request);
  } else if (request.status().code() == core::StatusCode::kFailedPrecondition) {
    response = HttpResponse("431 Request Header Fields Too Large", "text/plain",
                            "request too large\n", true);
    (void)net::WriteAll(fd, response, deadline);
    // Closing with unread input makes the kernel send RST, which can destroy our answer
    // before the client reads it: half-close, then discard a bounded amount of input.
    shutdown(fd, SHUT_WR);
    (void)net::ReadUntil(fd, "", 64 * 1024, std::min(deadline, DeadlineIn(0.2)));
    return;
  } else {
    return;  // timed out or reset: nobody to answer
  }
  (void)net::WriteAll(fd, response, deadline);  // a client that went away is not our error
}

std::string MetricsServer::Respond(const std::string& request) const {
  std::size_t line_end = request.find("\r\n");
  std::string line = request.substr(0, line_end);
  std::size_t sp1 = line.find(' ');
  std::size_t sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos)
    return HttpResponse("400 Bad Request", "text/plain", "bad request line\n", true);
  std::string method = line.substr(0, sp1);
  std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string path = target.substr(0, target.find('?'));
  if (path != "/metrics")
    return HttpResponse("404 Not Found", "text/plain", "try /metrics\n", method != "HEAD");
  if (method != "GET" && method != "HEAD")
    return HttpResponse("405 Method Not Allowed", "text/plain", "GET or HEAD only\n", true,
                        "Allow: GET, HEAD\r\n");
  return HttpResponse("200 OK", core::kTextContentType, render_(), method == "GET");
}

}  // namespace ccltune::worker
