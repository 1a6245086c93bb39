#include "serve/mock_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace plumb::serve::testing {

RawAnswer http_exchange(int port, std::string_view method, std::string_view path,
                        std::string_view body, std::string_view extra_headers, double timeout_s) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::runtime_error("connect failed");
  }
  timeval tv{};
  tv.tv_sec = static_cast<long>(timeout_s);
  tv.tv_usec = static_cast<long>((timeout_s - static_cast<double>(tv.tv_sec)) * 1e6);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string request = std::string(method) + " " + std::string(path) +
                        " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" +
                        std::string(extra_headers);
  if (!body.empty() || method == "POST")
    request += "Content-Type: application/json\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n";
  request += "\r\n" + std::string(body);
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  RawAnswer answer;
  char buffer[4096];
  while (true) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      answer.bytes.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    answer.closed = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
    break;
  }
  ::close(fd);
  return answer;
}

Dechunked dechunk(const std::string& answer) {
  Dechunked out;
  auto blank = answer.find("\r\n\r\n");
  if (blank == std::string::npos) return out;
  out.head = answer.substr(0, blank + 2);
  std::size_t at = blank + 4;
  while (at < answer.size()) {
    auto eol = answer.find("\r\n", at);
    if (eol == std::string::npos) return out;
    std::size_t size = std::strtoul(answer.substr(at, eol - at).c_str(), nullptr, 16);
    if (size == 0) {
      out.complete = answer.compare(eol, 4, "\r\n\r\n") == 0;
      return out;
    }
    out.body += answer.substr(eol + 2, size);
    at = eol + 2 + size + 2;
  }
  return out;
}

std::string without_created(std::string text) {
  const std::string key = "\"created\":";
  for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    auto start = at + key.size();
    auto end = start;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    text.replace(start, end - start, "0");
  }
  return text;
}

}  // namespace plumb::serve::testing
