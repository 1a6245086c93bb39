// A small HTTP/1.1 server for `plumb exporter` (/metrics, /healthz) and `plumb alert-relay`
// (Alertmanager's webhook). One thread, epoll, non-blocking sockets: a slow or malformed client
// costs one connection slot and a deadline, never a blocked scrape. Requests are limited in size
// and time; keep-alive is supported; a handler runs on the server thread and must be quick
// (render from a cache, or hand work to a queue).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace plumb::exporter {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // "/metrics?x=1" as sent
  std::string path;    // "/metrics": target without the query
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  // The first header of that (lower-case) name, or "".
  std::string header(const std::string& lower_name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // More header lines ("Allow" for a 405, ...); Content-Type, Content-Length and Connection are
  // written by the server.
  std::vector<std::pair<std::string, std::string>> headers;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  // "127.0.0.1:9464", "[::1]:9464", "0.0.0.0:9464", ":9464" (every address); port 0 = any free
  // port (tests), read back with port().
  std::string listen = "127.0.0.1:9464";
  std::string option_name = "--listen";  // named in bind errors
  std::size_t max_header_bytes = 16 * 1024;    // request line + headers; more: 431
  std::size_t max_body_bytes = 4 * 1024 * 1024;  // more: 413
  double request_timeout_seconds = 10;  // a request not complete by then: 408, closed
  double idle_timeout_seconds = 60;     // a keep-alive connection idle that long: closed
  int max_connections = 1024;           // past that, new connections are accepted and closed
};

// A --listen value taken apart: "127.0.0.1:9464", "[::1]:9464", ":9464" (host "" = every
// address, IPv6 and IPv4), "localhost:0". Throws plumb::Error "--listen TEXT: expected HOST:PORT".
struct ListenAddress {
  std::string host;  // without the brackets of an IPv6 address
  int port = 0;
};
ListenAddress parse_listen_address(const std::string& text, const std::string& option_name);

class HttpServer {
 public:
  // Binds and listens at once: throws plumb::Error "--listen 127.0.0.1:9464: cannot listen:
  // Address already in use" (or "expected HOST:PORT") so that a command fails before it starts
  // anything else.
  HttpServer(HttpServerOptions options, HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;  // the bound port (useful with port 0)
  // "127.0.0.1:9464", "[::]:9464": the address and port bound, for a URL.
  std::string bound_address() const;
  // Serves until `stop` becomes true (checked at least every 100 ms) or stop() is called.
  void serve(const std::atomic<bool>& stop);
  // Serves on a thread of its own until stop() or destruction (tests, the relay).
  void start();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace plumb::exporter
